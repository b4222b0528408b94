// Under a root message: "N replies" (with the time of the last one) opening its thread, and a
// "Reply in thread" action; for a deleted root kept for its replies, a note saying so. Nothing
// under a reply, nor inside the thread panel (its messages are the thread already).
import { useLocation, useSearch } from 'wouter'
import { formatFull, formatTime } from './format.ts'
import { useInThreadPanel } from './threads.ts'
import type { Message } from './types.ts'

/** The conversation's URL with its thread panel open on `rootId` (other parameters kept). */
export function useOpenThread(): (rootId: string) => void {
  const [location, navigate] = useLocation()
  const search = useSearch()
  return (rootId) => {
    const params = new URLSearchParams(search)
    params.set('thread', rootId)
    navigate(`${location}?${params.toString()}`)
  }
}

export function ThreadSummary({ message }: { message: Message }) {
  const inPanel = useInThreadPanel()
  const openThread = useOpenThread()
  if (message.thread_id) return null
  const deleted = message.deleted && <p className="muted small thread-deleted">This message was deleted.</p>
  if (inPanel) return deleted || null
  const count = message.reply_count
  return (
    <>
      {deleted}
      <div className="thread-summary">
        {count > 0 && (
          <button type="button" className="link-button small thread-link" onClick={() => openThread(message.id)} aria-label={`${count === 1 ? '1 reply' : `${count} replies`}: open the thread`}>
            {count === 1 ? '1 reply' : `${count} replies`}
          </button>
        )}
        {count > 0 && message.last_reply_at && (
          <span className="muted small">
            last reply{' '}
            <time dateTime={message.last_reply_at} title={formatFull(message.last_reply_at)}>
              {formatTime(message.last_reply_at)}
            </time>
          </span>
        )}
        {!message.deleted && (
          <button type="button" className="link-button small reply-in-thread" onClick={() => openThread(message.id)}>
            Reply in thread
          </button>
        )}
      </div>
    </>
  )
}
