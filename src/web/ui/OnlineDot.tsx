// The presence of an agent: a dot (green when it has a connection open) and its status text.
import { useDirectory } from '../people/queries.ts'

export function OnlineDot({ agentId, withStatus = false }: { agentId: string; withStatus?: boolean }) {
  const directory = useDirectory()
  const entry = directory.data?.find((p) => p.id === agentId)
  if (!entry || entry.type !== 'AGENT') return null
  const label = entry.online ? 'online' : 'offline'
  return (
    <>
      <span
        className={`online-dot${entry.online ? ' online' : ''}`}
        role="img"
        aria-label={label}
        title={entry.status_text ? `${label}: ${entry.status_text}` : label}
        data-testid="online-dot"
        data-online={entry.online ? 'true' : 'false'}
      />
      {withStatus && entry.status_text && <span className="agent-status muted small">{entry.status_text}</span>}
    </>
  )
}
