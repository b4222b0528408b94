// An agent's approval request as a card (docs/approvals.md): what it asks, the arguments as
// formatted JSON, the time left, and a button per choice for whoever may decide (an edit form for
// `edit`, an answer box for `respond`). Once settled, the outcome and who decided replace the
// buttons, for everyone watching (live/approvals.ts applies the approval_* frames). The decision
// carries the digest of what was shown, so it cannot apply to anything else.
import { useEffect, useState } from 'react'
import { useMutation, useQueryClient } from '@tanstack/react-query'
import { ApiError } from '../api/errors.ts'
import { useSignedInSession, type Session } from '../api/session.ts'
import { setApproval } from '../live/approvals.ts'
import { ErrorNote } from '../ui/ErrorNote.tsx'
import { formatFull } from './format.ts'
import { decideApproval, messageKeys } from './queries.ts'
import type { Message } from './types.ts'

type Approval = NonNullable<Message['approval']>
type Decision = Approval['choices'][number]

const LABELS: Record<Decision, string> = { approve: 'Approve', deny: 'Deny', edit: 'Edit and approve', respond: 'Respond' }
const OUTCOMES: Record<Approval['status'], string> = { pending: 'Waiting for a decision', approved: 'Approved', denied: 'Denied', expired: 'Expired', cancelled: 'Cancelled by the agent' }

/** Whether this person may decide (the server decides too; this only hides buttons that would be refused). */
export function mayDecide(approval: Approval, session: Session): boolean {
  if (session.role === 'observer') return false
  if (approval.approvers === 'members') return true
  if (approval.approvers === 'owner') return session.is_owner
  return approval.approvers.includes(session.user_id)
}

function timeLeft(expiresAt: string, now: number): string {
  const s = Math.max(0, Math.round((Date.parse(expiresAt) - now) / 1000))
  if (s === 0) return 'expiring now'
  if (s < 60) return `expires in ${s} s`
  if (s < 3600) return `expires in ${Math.ceil(s / 60)} min`
  if (s < 86_400) return `expires in ${Math.floor(s / 3600)} h ${Math.round((s % 3600) / 60)} min`
  return `expires in ${Math.floor(s / 86_400)} d`
}

function useNow(active: boolean): number {
  const [now, setNow] = useState(() => Date.now())
  useEffect(() => {
    if (!active) return
    const timer = setInterval(() => setNow(Date.now()), 1000)
    return () => clearInterval(timer)
  }, [active])
  return now
}

export function ApprovalCard({ message }: { message: Message }) {
  const session = useSignedInSession()
  const approval = message.approval!
  const queryClient = useQueryClient()
  const pending = approval.status === 'pending'
  const now = useNow(pending)
  const [form, setForm] = useState<'edit' | 'respond' | null>(null)
  const [argsDraft, setArgsDraft] = useState(() => JSON.stringify(approval.arguments, null, 2))
  const [answer, setAnswer] = useState('')
  const [formError, setFormError] = useState<string | null>(null)
  const decide = useMutation({
    mutationFn: (body: { decision: Decision; arguments?: Record<string, unknown>; comment?: string }) => decideApproval(message, { ...body, digest: approval.digest }),
    onSuccess: (decided) => {
      setForm(null)
      setApproval(queryClient, decided)
    },
    onError: (error) => {
      // Someone else was first: show the outcome that stands.
      if (error instanceof ApiError && error.code === 'ALREADY_DECIDED') void queryClient.invalidateQueries({ queryKey: messageKeys.channel(message.channel_id) })
    },
  })
  const submitEdit = () => {
    let parsed: unknown
    try {
      parsed = JSON.parse(argsDraft)
    } catch {
      return setFormError('The arguments are not valid JSON.')
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return setFormError('The arguments must be a JSON object ({ … }).')
    setFormError(null)
    decide.mutate({ decision: 'edit', arguments: parsed as Record<string, unknown> })
  }
  const canDecide = pending && mayDecide(approval, session)
  const expired = pending && Date.parse(approval.expires_at) <= now
  return (
    <section className={`approval-card approval-${approval.status}`} aria-label={`Approval request: ${approval.summary}`} data-testid="approval-card" data-status={approval.status}>
      <p className="approval-summary">{approval.summary}</p>
      <p className="muted small">
        Action <code>{approval.action}</code> with:
      </p>
      <pre className="approval-arguments" tabIndex={0} aria-label="Arguments">
        {JSON.stringify(approval.arguments, null, 2)}
      </pre>
      {pending ? (
        <p className="approval-state small">
          <strong>{OUTCOMES.pending}</strong> ·{' '}
          <time dateTime={approval.expires_at} title={formatFull(approval.expires_at)}>
            {timeLeft(approval.expires_at, now)}
          </time>{' '}
          (then {approval.on_expiry === 'approve' ? 'approved' : 'denied'})
        </p>
      ) : (
        <p className="approval-state small" role="status">
          <strong>{OUTCOMES[approval.status]}</strong>
          {approval.decision === 'edit' && ' with changes'}
          {approval.decision === 'respond' && ' with an answer'}
          {approval.decided_by_name && approval.status !== 'cancelled' && <> by {approval.decided_by_name}</>}
          {approval.decided_at && (
            <>
              {' · '}
              <time dateTime={approval.decided_at} title={formatFull(approval.decided_at)}>
                {formatFull(approval.decided_at)}
              </time>
            </>
          )}
        </p>
      )}
      {!pending && approval.comment && <p className="approval-comment">“{approval.comment}”</p>}
      {!pending && approval.decision === 'edit' && approval.final_arguments && (
        <pre className="approval-arguments" tabIndex={0} aria-label="Arguments as approved">
          {JSON.stringify(approval.final_arguments, null, 2)}
        </pre>
      )}
      {canDecide && !expired && form === null && (
        <div className="approval-actions">
          {approval.choices.map((choice) => (
            <button
              key={choice}
              type="button"
              className={choice === 'approve' ? 'primary' : choice === 'deny' ? 'danger-button' : ''}
              disabled={decide.isPending}
              onClick={() => (choice === 'edit' || choice === 'respond' ? setForm(choice) : decide.mutate({ decision: choice }))}
            >
              {LABELS[choice]}
            </button>
          ))}
        </div>
      )}
      {canDecide && form === 'edit' && (
        <form
          className="approval-form"
          onSubmit={(e) => {
            e.preventDefault()
            submitEdit()
          }}
        >
          <label htmlFor={`approval-args-${message.id}`}>Arguments to approve (JSON)</label>
          <textarea id={`approval-args-${message.id}`} rows={6} value={argsDraft} onChange={(e) => setArgsDraft(e.target.value)} spellCheck={false} />
          {formError && <p className="error small">{formError}</p>}
          <div className="approval-actions">
            <button type="submit" className="primary" disabled={decide.isPending}>
              Approve with these arguments
            </button>
            <button type="button" onClick={() => setForm(null)}>
              Back
            </button>
          </div>
        </form>
      )}
      {canDecide && form === 'respond' && (
        <form
          className="approval-form"
          onSubmit={(e) => {
            e.preventDefault()
            if (!answer.trim()) return setFormError('Write an answer first.')
            setFormError(null)
            decide.mutate({ decision: 'respond', comment: answer })
          }}
        >
          <label htmlFor={`approval-answer-${message.id}`}>Your answer to the agent</label>
          <textarea id={`approval-answer-${message.id}`} rows={3} value={answer} onChange={(e) => setAnswer(e.target.value)} />
          {formError && <p className="error small">{formError}</p>}
          <div className="approval-actions">
            <button type="submit" className="primary" disabled={decide.isPending}>
              Send answer
            </button>
            <button type="button" onClick={() => setForm(null)}>
              Back
            </button>
          </div>
        </form>
      )}
      <ErrorNote error={decide.error} />
    </section>
  )
}
