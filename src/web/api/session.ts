// The signed-in person's session: the JWT and who it belongs to, kept in localStorage so it
// survives a reload, dropped when it expires or the server refuses it (401).
import { createContext, useContext, useSyncExternalStore } from 'react'

export interface Session {
  token: string
  user_id: string
  email: string
  display_name: string
  role: 'admin' | 'member' | 'observer'
  is_owner: boolean
  expires_at: string
}

const KEY = 'ams.session'
const listeners = new Set<() => void>()
let current: Session | null = read()

function read(): Session | null {
  try {
    const raw = localStorage.getItem(KEY)
    if (!raw) return null
    const session = JSON.parse(raw) as Session
    return Date.parse(session.expires_at) > Date.now() ? session : null
  } catch {
    return null
  }
}

function emit(): void {
  for (const listener of listeners) listener()
}

export function getSession(): Session | null {
  if (current && Date.parse(current.expires_at) <= Date.now()) signOut('expired')
  return current
}

export function signIn(session: Session): void {
  current = session
  localStorage.setItem(KEY, JSON.stringify(session))
  sessionEndReason = null
  emit()
}

/** Why the last session ended, shown on the login page. */
export let sessionEndReason: 'expired' | 'signed_out' | null = null

export function signOut(reason: 'expired' | 'signed_out' = 'signed_out'): void {
  if (!current) return
  current = null
  sessionEndReason = reason
  localStorage.removeItem(KEY)
  emit()
}

// Another tab signed in or out.
window.addEventListener('storage', (event) => {
  if (event.key !== KEY) return
  current = read()
  emit()
})

export function useSession(): Session | null {
  return useSyncExternalStore(
    (listener) => {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    () => current,
  )
}

/**
 * The signed-in person's session for everything under the signed-in part of the app (App renders
 * the provider only with a session), so components read it where they use it instead of
 * receiving it through every component between.
 */
export const SessionContext = createContext<Session | null>(null)

export function useSignedInSession(): Session {
  const session = useContext(SessionContext)
  if (!session) throw new Error('useSignedInSession is used outside the signed-in part of the app')
  return session
}
