// Search results: the best matches first, each with its conversation, author, time and the text
// with the matched words highlighted; opening one jumps to the message in its conversation.
import { useEffect, useMemo, useRef } from 'react'
import { Link, useSearch } from 'wouter'
import { useChannels, useDms } from '../channels/queries.ts'
import { formatDay, formatTime } from '../messages/format.ts'
import { AgentBadge } from '../ui/AgentBadge.tsx'
import { ErrorNote } from '../ui/ErrorNote.tsx'
import { SEARCH_LIMIT, useSearchResults } from './queries.ts'
import { Snippet } from './Snippet.tsx'

export function SearchPage() {
  const q = (new URLSearchParams(useSearch()).get('q') ?? '').trim()
  const results = useSearchResults(q)
  const channels = useChannels()
  const dms = useDms()
  const names = useMemo(() => {
    const map = new Map<string, string>()
    for (const c of channels.data ?? []) if (c.type === 'channel') map.set(c.id, `#${c.name}`)
    for (const d of dms.data ?? []) map.set(d.id, d.participant.name)
    return map
  }, [channels.data, dms.data])
  const hits = results.data?.results ?? []
  // A search sent from the box moves the focus to the results, so Tab goes through them next.
  const title = useRef<HTMLHeadingElement>(null)
  useEffect(() => {
    if (document.activeElement?.id === 'search-messages') title.current?.focus()
  }, [q])
  return (
    <section className="search-page" aria-labelledby="search-title">
      <header className="channel-header">
        <h1 id="search-title" ref={title} tabIndex={-1}>
          {q ? `Results for “${q}”` : 'Search'}
        </h1>
        <p className="muted small" role="status">
          {!q ? '' : results.isPending ? 'Searching…' : results.isSuccess ? (hits.length === 1 ? '1 message' : `${hits.length}${hits.length === SEARCH_LIMIT ? '+' : ''} messages`) : ''}
        </p>
      </header>
      <div className="search-body">
        {!q && <p className="muted">Type words in the search box. Use "quotes" for a phrase, OR for either word, and -word to leave a word out.</p>}
        <ErrorNote error={results.error} />
        {results.isSuccess && hits.length === 0 && (
          <div className="empty-conversation">
            <p>No messages match “{q}”.</p>
            <p className="small">Try fewer or different words. Search looks at every conversation you can read.</p>
          </div>
        )}
        <ol className="search-results">
          {hits.map((hit) => (
            <li key={hit.id}>
              <Link href={`/c/${hit.channel_id}?message=${hit.id}`} className="search-hit" data-testid="search-hit">
                <span className="search-hit-head">
                  <span className="search-hit-where">{names.get(hit.channel_id) ?? 'A conversation'}</span>
                  <span className="author">{hit.author_name}</span>
                  {hit.author_type === 'AGENT' && <AgentBadge />}
                  <time dateTime={hit.created_at} className="muted small">
                    {formatDay(hit.created_at)}, {formatTime(hit.created_at)}
                  </time>
                </span>
                <Snippet html={hit.snippet} />
              </Link>
            </li>
          ))}
        </ol>
      </div>
    </section>
  )
}
