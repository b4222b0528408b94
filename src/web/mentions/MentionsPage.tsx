// "Mentions": the messages that mention the signed-in person, newest first, each with its
// conversation, author and time; opening one jumps to the message in its conversation.
import { useMemo } from 'react'
import { Link } from 'wouter'
import { humanHandle } from '../../lib/mentions.ts'
import { useSignedInSession } from '../api/session.ts'
import { useChannels, useDms } from '../channels/queries.ts'
import { formatDay, formatTime } from '../messages/format.ts'
import { MessageText } from '../messages/MessageText.tsx'
import { AgentBadge } from '../ui/AgentBadge.tsx'
import { ErrorNote } from '../ui/ErrorNote.tsx'
import { useMentions } from './queries.ts'

export function MentionsPage() {
  const session = useSignedInSession()
  const mentions = useMentions()
  const channels = useChannels()
  const dms = useDms()
  const names = useMemo(() => {
    const map = new Map<string, string>()
    for (const c of channels.data ?? []) if (c.type === 'channel') map.set(c.id, `#${c.name}`)
    for (const d of dms.data ?? []) map.set(d.id, d.participant.name)
    return map
  }, [channels.data, dms.data])
  const messages = mentions.data?.pages.flatMap((p) => p.messages) ?? []
  return (
    <section className="search-page" aria-labelledby="mentions-title">
      <header className="channel-header">
        <h1 id="mentions-title">Mentions</h1>
        <p className="muted small" role="status">
          {mentions.isPending ? 'Loading…' : mentions.isSuccess ? (messages.length === 1 ? '1 message mentions you' : `${messages.length}${mentions.hasNextPage ? '+' : ''} messages mention you`) : ''}
        </p>
      </header>
      <div className="search-body">
        <ErrorNote error={mentions.error} />
        {mentions.isSuccess && messages.length === 0 && (
          <div className="empty-conversation">
            <p>No one has mentioned you yet.</p>
            <p className="small">When someone writes @{humanHandle(session.display_name)} in a conversation you are in, the message shows up here.</p>
          </div>
        )}
        <ol className="search-results" aria-label="Messages that mention you">
          {messages.map((m) => (
            <li key={m.id}>
              <Link href={`/c/${m.channel_id}?message=${m.id}`} className="search-hit" data-testid="mention-hit">
                <span className="search-hit-head">
                  <span className="search-hit-where">{names.get(m.channel_id) ?? 'A conversation'}</span>
                  <span className="author">{m.author_name}</span>
                  {m.author_type === 'AGENT' && <AgentBadge />}
                  <time dateTime={m.created_at} className="muted small">
                    {formatDay(m.created_at)}, {formatTime(m.created_at)}
                  </time>
                </span>
                <MessageText message={m} className="snippet" />
              </Link>
            </li>
          ))}
        </ol>
        {mentions.hasNextPage && (
          <button type="button" className="link-button" disabled={mentions.isFetchingNextPage} onClick={() => void mentions.fetchNextPage()}>
            {mentions.isFetchingNextPage ? 'Loading…' : 'Show older mentions'}
          </button>
        )}
      </div>
    </section>
  )
}
