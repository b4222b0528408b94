// The conversation's messages that are not sent yet: waiting for the connection (they go out by
// themselves when it is back), or refused by the server (with the reason). Each can be sent now,
// taken back into the box to edit, or discarded.
import { useLiveStatus } from '../live/LiveContext.tsx'
import { discard, flushOutbox, useOutbox } from './outbox.ts'

export function Outbox({ channelId, onEdit }: { channelId: string; onEdit: (text: string) => void }) {
  const queued = useOutbox(channelId)
  const live = useLiveStatus()
  if (queued.length === 0) return null
  return (
    <section className="outbox" aria-label="Messages not sent yet" data-testid="outbox">
      <ul className="plain-list">
        {queued.map((item) => (
          <li key={item.id} className="outbox-item" data-testid="queued-message">
            <p className="message-text">{item.text}</p>
            <p className={item.refused ? 'error-note small' : 'muted small'} role="status">
              {item.refused
                ? `Not sent: ${item.refused}`
                : navigator.onLine && live !== 'reconnecting'
                  ? 'Not sent yet: the server could not be reached. It will be tried again shortly.'
                  : 'Not sent yet: you are offline. It will be sent when the connection is back.'}
            </p>
            <div className="outbox-actions">
              {!item.refused && (
                <button type="button" className="link-button small" onClick={() => void flushOutbox()}>
                  Send now
                </button>
              )}
              <button
                type="button"
                className="link-button small"
                onClick={() => {
                  discard(item.id)
                  onEdit(item.text)
                }}
              >
                Edit
              </button>
              <button type="button" className="link-button small danger" onClick={() => discard(item.id)}>
                Discard
              </button>
            </div>
          </li>
        ))}
      </ul>
    </section>
  )
}
