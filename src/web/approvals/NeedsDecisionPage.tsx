// "Needs your decision": every pending approval request the person may decide, soonest expiry
// first, each with its conversation; opening one jumps to the request, where the card decides.
import { useMemo } from 'react'
import { Link } from 'wouter'
import { useChannels, useDms } from '../channels/queries.ts'
import { formatFull } from '../messages/format.ts'
import { ErrorNote } from '../ui/ErrorNote.tsx'
import { usePendingApprovals } from './queries.ts'

export function NeedsDecisionPage() {
  const pending = usePendingApprovals()
  const channels = useChannels()
  const dms = useDms()
  const names = useMemo(() => {
    const map = new Map<string, string>()
    for (const c of channels.data ?? []) if (c.type === 'channel') map.set(c.id, `#${c.name}`)
    for (const d of dms.data ?? []) map.set(d.id, d.participant.name)
    return map
  }, [channels.data, dms.data])
  const approvals = pending.data?.approvals ?? []
  return (
    <section className="search-page" aria-labelledby="decisions-title">
      <header className="channel-header">
        <h1 id="decisions-title">Needs your decision</h1>
        <p className="muted small" role="status">
          {pending.isPending ? 'Loading…' : pending.isSuccess ? (approvals.length === 1 ? '1 request waits for you' : `${approvals.length} requests wait for you`) : ''}
        </p>
      </header>
      <div className="search-body">
        <ErrorNote error={pending.error} />
        {pending.isSuccess && approvals.length === 0 && (
          <div className="empty-conversation">
            <p>Nothing needs your decision.</p>
            <p className="small">When an agent asks for approval in a conversation you may decide in, the request shows up here.</p>
          </div>
        )}
        <ol className="search-results needs-decision" aria-label="Requests waiting for your decision">
          {approvals.map((a) => (
            <li key={a.message_id}>
              <Link href={`/c/${a.channel_id}?message=${a.message_id}`} className="search-hit" data-testid="decision-hit">
                <span className="search-hit-head">
                  <span className="search-hit-where">{names.get(a.channel_id) ?? 'A conversation'}</span>
                  <code>{a.action}</code>
                  <time dateTime={a.expires_at} className="muted small">
                    expires {formatFull(a.expires_at)}
                  </time>
                </span>
                <span className="snippet">{a.summary}</span>
              </Link>
            </li>
          ))}
        </ol>
      </div>
    </section>
  )
}
