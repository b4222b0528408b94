// Routes: /login and /invite for everyone; the workspace (/, /c/:id) once signed in.
import { useEffect, useRef } from 'react'
import { Redirect, Route, Switch, useLocation } from 'wouter'
import { useQueryClient } from '@tanstack/react-query'
import { SessionContext, useSession } from './api/session.ts'
import { LoginPage } from './auth/LoginPage.tsx'
import { SignupPage } from './auth/SignupPage.tsx'
import { InvitePage } from './invite/InvitePage.tsx'
import { Workspace } from './workspace/Workspace.tsx'

/** The login page, coming back to where the person was going (its query too: `?thread=`, `?message=`). */
const loginFor = (target: string) => `/login${target === '/' ? '' : `?next=${encodeURIComponent(target)}`}`

export function App() {
  const session = useSession()
  const queryClient = useQueryClient()
  const [location] = useLocation()
  // Another person's data must never show after a sign-out or an expired session. Only on the
  // change from signed in to signed out: clearing on every signed-out render would drop the
  // queries of the login and invite pages under their feet.
  const signedIn = useRef(session !== null)
  useEffect(() => {
    if (signedIn.current && !session) queryClient.clear()
    signedIn.current = session !== null
  }, [session, queryClient])

  return (
    <Switch>
      <Route path="/invite" component={InvitePage} />
      <Route path="/login" component={LoginPage} />
      <Route path="/signup" component={SignupPage} />
      <Route>
        {session ? (
          <SessionContext.Provider value={session}>
            <Workspace />
          </SessionContext.Provider>
        ) : (
          <Redirect to={loginFor(location + window.location.search)} />
        )}
      </Route>
    </Switch>
  )
}
