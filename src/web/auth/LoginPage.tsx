import { useState, type FormEvent } from 'react'
import { Link, Redirect, useSearch } from 'wouter'
import { useMutation } from '@tanstack/react-query'
import { ApiError } from '../api/errors.ts'
import { sessionEndReason, signIn, useSession } from '../api/session.ts'
import { AuthFrame } from '../ui/AuthFrame.tsx'
import { ErrorNote } from '../ui/ErrorNote.tsx'
import { passwordLogin, useRegistration } from './queries.ts'

/** Only paths of this app: never an absolute URL handed in through `next`. */
function safeNext(value: string | null): string {
  return value && value.startsWith('/') && !value.startsWith('//') ? value : '/'
}

export function LoginPage() {
  const session = useSession()
  const params = new URLSearchParams(useSearch())
  const [email, setEmail] = useState('')
  const [password, setPassword] = useState('')
  const registration = useRegistration()
  const signUp = registration.data && registration.data.registration_mode !== 'closed'
  const login = useMutation({
    mutationFn: () => passwordLogin(email, password),
    onSuccess: (data) => signIn(data),
  })
  if (session) return <Redirect to={safeNext(params.get('next'))} />

  const submit = (event: FormEvent) => {
    event.preventDefault()
    login.mutate()
  }
  const badCredentials = login.error instanceof ApiError && login.error.status === 401
  return (
    <AuthFrame title="Sign in">
      {sessionEndReason === 'expired' && !login.error && <p className="notice">Your session has ended. Please sign in again.</p>}
      <form onSubmit={submit} className="stack">
        <label>
          E-mail
          <input type="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.target.value)} />
        </label>
        <label>
          Password
          <input type="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} />
        </label>
        {badCredentials ? (
          <p className="error-note" role="alert">
            That e-mail and password do not match an account.
          </p>
        ) : (
          <ErrorNote error={login.error} />
        )}
        <button type="submit" className="primary" disabled={login.isPending}>
          {login.isPending ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      <p className="hint">
        {signUp ? (
          <>
            New here? Open the invite link you were sent to set your password, or <Link href="/signup">create an account</Link>
            {registration.data?.registration_mode === 'approval' ? ' (the owner approves new accounts)' : ''}.
          </>
        ) : (
          'New here? Open the invite link you were sent to set your password.'
        )}
      </p>
    </AuthFrame>
  )
}
