// /invite?token=…: who is invited, then a password, then signed in. Expired, used and unknown
// invites each get their own page saying what to do.
import { useState, type FormEvent } from 'react'
import { Link, useLocation, useSearch } from 'wouter'
import { useMutation } from '@tanstack/react-query'
import { ApiError } from '../api/errors.ts'
import { signIn } from '../api/session.ts'
import { AuthFrame } from '../ui/AuthFrame.tsx'
import { ErrorNote } from '../ui/ErrorNote.tsx'
import { MIN_PASSWORD, PasswordRule } from './PasswordRule.tsx'
import { acceptInvite, useInvite } from './queries.ts'
import { inviteTokenFrom } from './token.ts'

function InviteProblem({ code }: { code: string }) {
  if (code === 'INVITE_EXPIRED') {
    return (
      <AuthFrame title="This invite has expired">
        <p>Invites are valid for 7 days. Ask the workspace owner to send you a new one.</p>
        <p className="hint">
          Already set a password? <Link href="/login">Sign in</Link>
        </p>
      </AuthFrame>
    )
  }
  if (code === 'INVITE_USED') {
    return (
      <AuthFrame title="This invite has already been used">
        <p>Each invite works once. If you set your password with it, sign in with your e-mail and password.</p>
        <Link href="/login" className="button primary">
          Go to sign in
        </Link>
      </AuthFrame>
    )
  }
  return (
    <AuthFrame title="This invite link is not valid">
      <p>The link may be incomplete: check that you copied all of it, or ask the person who invited you for a new one.</p>
      <p className="hint">
        Have an account? <Link href="/login">Sign in</Link>
      </p>
    </AuthFrame>
  )
}

export function InvitePage() {
  const token = inviteTokenFrom(useSearch())
  const [, navigate] = useLocation()
  const [password, setPassword] = useState('')
  const [displayName, setDisplayName] = useState<string | null>(null)
  const invite = useInvite(token)
  const accept = useMutation({
    mutationFn: () => acceptInvite({ token, password, ...(displayName?.trim() ? { display_name: displayName.trim() } : {}) }),
    onSuccess: (session) => {
      signIn(session)
      navigate('/', { replace: true })
    },
  })

  if (token === '') return <InviteProblem code="INVITE_INVALID" />
  if (invite.isPending) {
    return (
      <AuthFrame title="Checking your invite…">
        <p aria-busy="true">One moment.</p>
      </AuthFrame>
    )
  }
  const problem = invite.error ?? (accept.error instanceof ApiError && accept.error.code.startsWith('INVITE_') ? accept.error : null)
  if (problem instanceof ApiError && problem.code.startsWith('INVITE_')) return <InviteProblem code={problem.code} />
  if (invite.error) {
    return (
      <AuthFrame title="Cannot check this invite">
        <ErrorNote error={invite.error} />
        <button type="button" className="primary" onClick={() => invite.refetch()}>
          Try again
        </button>
      </AuthFrame>
    )
  }
  const details = invite.data
  const submit = (event: FormEvent) => {
    event.preventDefault()
    if (password.length >= MIN_PASSWORD) accept.mutate()
  }
  return (
    <AuthFrame title="You're invited">
      <p>Set a password to join the workspace.</p>
      <dl className="invite-details">
        <dt>E-mail</dt>
        <dd data-testid="invite-email">{details.email}</dd>
        <dt>Role</dt>
        <dd data-testid="invite-role">{details.role === 'observer' ? 'Observer (can read, cannot post)' : 'Member'}</dd>
      </dl>
      <form onSubmit={submit} className="stack">
        <label>
          Your name
          <input autoComplete="name" maxLength={255} value={displayName ?? details.display_name} onChange={(e) => setDisplayName(e.target.value)} />
        </label>
        <input type="email" autoComplete="username" value={details.email} readOnly hidden />
        <label>
          Password
          <input type="password" autoComplete="new-password" required minLength={MIN_PASSWORD} aria-describedby="password-rule" value={password} onChange={(e) => setPassword(e.target.value)} />
        </label>
        <PasswordRule password={password} />
        <ErrorNote error={accept.error} />
        <button type="submit" className="primary" disabled={accept.isPending || password.length < MIN_PASSWORD}>
          {accept.isPending ? 'Joining…' : 'Set password and join'}
        </button>
      </form>
    </AuthFrame>
  )
}
