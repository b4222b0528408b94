// People: invite a human with a role (the invite link shown to copy), the invites not accepted
// yet (with a new link on request), sign-ups waiting for approval, and everyone with their role.
import { useState, type FormEvent } from 'react'
import { useMutation, useQueryClient } from '@tanstack/react-query'
import { useSignedInSession } from '../api/session.ts'
import { ErrorNote } from '../ui/ErrorNote.tsx'
import { OnlineDot } from '../ui/OnlineDot.tsx'
import { SecretOnce } from '../ui/SecretOnce.tsx'
import { formatDay, formatWhen, ROLE_LABELS } from './format.ts'
import { ConfirmButton } from './Controls.tsx'
import { Empty, LoadFailed, Loading } from './QueryState.tsx'
import { approveRegistration, createInvite, refuseRegistration, settingsKeys, useInvites, usePeople, useRegistrations } from './queries.ts'

type Role = 'member' | 'observer'

interface Invited {
  email: string
  invite_url: string
  expires_at: string
}

const ROLE_HELP: Record<Role, string> = {
  member: 'Member (reads and writes)',
  observer: 'Observer (reads only)',
}

function InviteLink({ invited, onDone }: { invited: Invited; onDone: () => void }) {
  return (
    <SecretOnce
      key={invited.invite_url}
      label="invite link"
      value={invited.invite_url}
      note={`Send it to ${invited.email}: it works once, until ${formatWhen(invited.expires_at)}. If it gets lost, use “New link” below.`}
      onDone={onDone}
    />
  )
}

function InviteForm({ onInvited }: { onInvited: (invited: Invited) => void }) {
  const queryClient = useQueryClient()
  const [email, setEmail] = useState('')
  const [displayName, setDisplayName] = useState('')
  const [role, setRole] = useState<Role>('member')
  const invite = useMutation({
    mutationFn: () => createInvite({ email: email.trim(), role, ...(displayName.trim() ? { display_name: displayName.trim() } : {}) }),
    onSuccess: (created) => {
      setEmail('')
      setDisplayName('')
      setRole('member')
      onInvited(created)
      void queryClient.invalidateQueries({ queryKey: settingsKeys.invites })
    },
  })
  const submit = (event: FormEvent) => {
    event.preventDefault()
    if (email.trim()) invite.mutate()
  }
  return (
    <form className="card stack" onSubmit={submit} aria-labelledby="invite-title">
      <h3 id="invite-title">Invite someone</h3>
      <div className="form-grid">
        <label>
          E-mail
          <input type="email" value={email} required maxLength={254} autoComplete="off" onChange={(e) => setEmail(e.target.value)} />
        </label>
        <label>
          Name (optional)
          <input value={displayName} maxLength={255} autoComplete="off" onChange={(e) => setDisplayName(e.target.value)} />
        </label>
      </div>
      <div className="field">
        <label htmlFor="invite-role">Role</label>
        <select id="invite-role" value={role} onChange={(e) => setRole(e.target.value as Role)}>
          <option value="member">{ROLE_HELP.member}</option>
          <option value="observer">{ROLE_HELP.observer}</option>
        </select>
      </div>
      <ErrorNote
        error={invite.error}
        sentences={{ EMAIL_TAKEN: 'Someone with that e-mail address already has an account in this workspace.', INVALID_ROLE: 'Choose Member or Observer as the role.' }}
      />
      <div>
        <button type="submit" className="primary" disabled={invite.isPending || !email.trim()}>
          {invite.isPending ? 'Creating…' : 'Create invite link'}
        </button>
      </div>
    </form>
  )
}

function PendingInvites({ onInvited }: { onInvited: (invited: Invited) => void }) {
  const queryClient = useQueryClient()
  const invites = useInvites()
  const resend = useMutation({
    mutationFn: (invite: { email: string; role: Role }) => createInvite({ email: invite.email, role: invite.role }),
    onSuccess: (created) => {
      onInvited(created)
      void queryClient.invalidateQueries({ queryKey: settingsKeys.invites })
    },
  })
  return (
    <section className="card stack" aria-labelledby="pending-title">
      <div>
        <h3 id="pending-title">Invited, not joined yet</h3>
        <p className="muted small">For safety, links are not kept in a readable form and cannot be shown again. “New link” makes a fresh one; the earlier link stops working.</p>
      </div>
      {invites.isPending && <Loading what="invites" />}
      {invites.isError && <LoadFailed what="the invites" error={invites.error} retry={() => void invites.refetch()} />}
      {invites.isSuccess && invites.data.length === 0 && <Empty>Nobody is waiting to join. Invite someone above.</Empty>}
      {invites.isSuccess && invites.data.length > 0 && (
        <ul className="plain-list divided">
          {invites.data.map((invite) => (
            <li key={invite.user_id} className="person-row" data-testid="pending-invite">
              <div className="person">
                <span className="person-name">{invite.display_name}</span>
                <span className="muted small">{invite.email}</span>
              </div>
              <span className="tag">{ROLE_LABELS[invite.role]}</span>
              {invite.expired ? <span className="pill pill-failed">Expired {formatDay(invite.expires_at)}</span> : <span className="muted small">Link valid until {formatDay(invite.expires_at)}</span>}
              <button
                type="button"
                className="secondary small push-end"
                aria-label={`New link for ${invite.email}`}
                disabled={resend.isPending && resend.variables?.email === invite.email}
                onClick={() => resend.mutate({ email: invite.email, role: invite.role })}
              >
                New link
              </button>
            </li>
          ))}
        </ul>
      )}
      <ErrorNote error={resend.error} sentences={{ EMAIL_TAKEN: 'They have joined in the meantime: no new link is needed.' }} />
    </section>
  )
}

function AwaitingApproval() {
  const queryClient = useQueryClient()
  const registrations = useRegistrations()
  const settle = () => Promise.all([queryClient.invalidateQueries({ queryKey: settingsKeys.registrations }), queryClient.invalidateQueries({ queryKey: settingsKeys.people })])
  const approve = useMutation({
    mutationFn: approveRegistration,
    onSuccess: settle,
  })
  const refuse = useMutation({
    mutationFn: refuseRegistration,
    onSuccess: settle,
  })
  return (
    <section className="card stack" aria-labelledby="approval-title">
      <div>
        <h3 id="approval-title">Waiting for approval</h3>
        <p className="muted small">People who signed up themselves. Until you approve them they can sign in but see nothing.</p>
      </div>
      {registrations.isPending && <Loading what="sign-ups" />}
      {registrations.isError && <LoadFailed what="the sign-ups" error={registrations.error} retry={() => void registrations.refetch()} />}
      {registrations.isSuccess && registrations.data.registrations.length === 0 && <Empty>Nobody is waiting for approval.</Empty>}
      {registrations.isSuccess && registrations.data.registrations.length > 0 && (
        <ul className="plain-list divided">
          {registrations.data.registrations.map((r) => (
            <li key={r.id} className="person-row" data-testid="registration">
              <div className="person">
                <span className="person-name">{r.display_name}</span>
                <span className="muted small">
                  {r.email} · signed up {formatDay(r.created_at)}
                </span>
              </div>
              <div className="row-actions push-end">
                <button type="button" className="primary small" aria-label={`Approve ${r.email}`} disabled={approve.isPending} onClick={() => approve.mutate(r.id)}>
                  Approve
                </button>
                <ConfirmButton
                  className="danger-outline small"
                  label={`Refuse ${r.email}`}
                  disabled={refuse.isPending}
                  question={`Refuse ${r.email}? Their account is deleted.`}
                  onConfirm={() => refuse.mutate(r.id)}
                >
                  Refuse
                </ConfirmButton>
              </div>
            </li>
          ))}
        </ul>
      )}
      <ErrorNote error={approve.error ?? refuse.error} sentences={{ NOT_FOUND: 'That sign-up was already approved or refused.' }} />
    </section>
  )
}

function PeopleList() {
  const session = useSignedInSession()
  const people = usePeople()
  return (
    <section className="card stack" aria-labelledby="people-title">
      <h3 id="people-title">Everyone{people.data ? ` (${people.data.length})` : ''}</h3>
      {people.isPending && <Loading what="people" />}
      {people.isError && <LoadFailed what="the people" error={people.error} retry={() => void people.refetch()} />}
      {people.isSuccess && people.data.length === 0 && <Empty>Nobody has joined yet.</Empty>}
      {people.isSuccess && people.data.length > 0 && (
        <ul className="plain-list divided">
          {people.data.map((p) => (
            <li key={p.id} className="person-row" data-testid="person">
              <div className="person">
                <span className="person-name">
                  {p.display_name}
                  {p.id === session.user_id ? ' (you)' : ''}
                  <OnlineDot memberId={p.id} />
                </span>
                <span className="muted small">{p.email}</span>
              </div>
              <span className="tag">{p.is_owner ? 'Owner' : ROLE_LABELS[p.role]}</span>
            </li>
          ))}
        </ul>
      )}
    </section>
  )
}

export function PeopleSettings() {
  const [invited, setInvited] = useState<Invited | null>(null)
  return (
    <div className="settings-section">
      <div className="section-intro">
        <h2>People</h2>
        <p className="muted">People join with an invite link and set their own password. Members read and write; observers only read.</p>
      </div>
      {invited && <InviteLink invited={invited} onDone={() => setInvited(null)} />}
      <InviteForm onInvited={setInvited} />
      <PendingInvites onInvited={setInvited} />
      <AwaitingApproval />
      <PeopleList />
    </div>
  )
}
