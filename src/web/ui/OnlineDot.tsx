// The presence of a person or an agent: a dot (green while they have a connection open, kept live
// by `presence` frames: people/directory-state.ts) and, for an agent, its status text.
import { useDirectory } from '../people/queries.ts'

export function OnlineDot({ memberId, withStatus = false }: { memberId: string; withStatus?: boolean }) {
  const directory = useDirectory()
  const entry = directory.data?.find((p) => p.id === memberId)
  if (!entry) return null
  const label = entry.online ? 'online' : 'offline'
  const status = entry.type === 'AGENT' ? entry.status_text : null
  return (
    <>
      <span
        className={`online-dot${entry.online ? ' online' : ''}`}
        role="img"
        aria-label={label}
        title={status ? `${label}: ${status}` : label}
        data-testid="online-dot"
        data-member={entry.id}
        data-online={entry.online ? 'true' : 'false'}
      />
      {withStatus && status && <span className="agent-status muted small">{status}</span>}
    </>
  )
}
