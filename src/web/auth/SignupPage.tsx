// Sign-up, for a workspace whose owner lets people register (settings: "Anyone can sign up", or
// "with approval"): name, e-mail and password make an account, which is then signed in. Awaiting
// approval, the workspace says so; a workspace closed to sign-ups answers in words.
import { useState, type FormEvent } from 'react'
import { Link, Redirect } from 'wouter'
import { useMutation } from '@tanstack/react-query'
import { signIn, useSession } from '../api/session.ts'
import { MIN_PASSWORD, PasswordRule } from '../invite/PasswordRule.tsx'
import { AuthFrame } from '../ui/AuthFrame.tsx'
import { ErrorNote } from '../ui/ErrorNote.tsx'
import { signUp, useRegistration } from './queries.ts'

export function SignupPage() {
  const session = useSession()
  const [name, setName] = useState('')
  const [email, setEmail] = useState('')
  const [password, setPassword] = useState('')
  const mode = useRegistration().data?.registration_mode
  const signup = useMutation({
    mutationFn: () => signUp({ email, password, display_name: name.trim() }),
    onSuccess: (data) => signIn(data),
  })
  if (session) return <Redirect to="/" />
  const submit = (event: FormEvent) => {
    event.preventDefault()
    signup.mutate()
  }
  const haveAccount = (
    <p className="hint">
      Have an account? <Link href="/login">Sign in</Link>
    </p>
  )
  if (mode === 'closed') {
    return (
      <AuthFrame title="Create an account">
        <p className="notice">This workspace does not accept sign-ups. Ask its owner for an invitation.</p>
        {haveAccount}
      </AuthFrame>
    )
  }
  return (
    <AuthFrame title="Create an account">
      {mode === 'approval' && <p className="hint">The owner approves new accounts; until then you can sign in but not read or post.</p>}
      <form onSubmit={submit} className="stack">
        <label>
          Your name
          <input required maxLength={255} autoComplete="name" value={name} onChange={(e) => setName(e.target.value)} />
        </label>
        <label>
          E-mail
          <input type="email" required autoComplete="username" value={email} onChange={(e) => setEmail(e.target.value)} />
        </label>
        <label>
          Password
          <input type="password" required autoComplete="new-password" aria-describedby="password-rule" value={password} onChange={(e) => setPassword(e.target.value)} />
        </label>
        <PasswordRule password={password} />
        <ErrorNote error={signup.error} />
        <button type="submit" className="primary" disabled={signup.isPending || password.length < MIN_PASSWORD || !name.trim()}>
          {signup.isPending ? 'Creating…' : 'Create account'}
        </button>
      </form>
      {haveAccount}
    </AuthFrame>
  )
}
