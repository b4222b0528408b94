// The channel browser: every public channel of the workspace (private ones and DMs are never
// listed, docs/decisions.md), filtered by name; one joins with a button and lands in it.
import { useState } from 'react'
import { useLocation } from 'wouter'
import { useMutation, useQueryClient } from '@tanstack/react-query'
import { ErrorNote } from '../ui/ErrorNote.tsx'
import { channelKeys, joinChannel, useBrowse } from './queries.ts'
import { reconcileSoon } from './sidebar-state.ts'

export function BrowsePage({ onNavigate }: { onNavigate?: () => void }) {
  const [filter, setFilter] = useState('')
  const q = filter.trim()
  const list = useBrowse(q)
  const queryClient = useQueryClient()
  const [, navigate] = useLocation()
  const join = useMutation({
    mutationFn: joinChannel,
    onSuccess: (_added, id) => {
      void reconcileSoon(queryClient, 0)
      void queryClient.invalidateQueries({ queryKey: channelKeys.one(id) })
      navigate(`/c/${id}`, { state: { focusComposer: true } })
      onNavigate?.()
    },
  })
  const channels = list.data ?? []
  return (
    <section className="search-page" aria-labelledby="browse-title">
      <header className="channel-header">
        <h1 id="browse-title">Browse channels</h1>
        <p className="muted small">Public channels anyone here can join. Private channels are joined when a member adds you.</p>
      </header>
      <div className="search-body">
        <label className="browse-filter">
          Filter by name
          <input type="search" value={filter} onChange={(e) => setFilter(e.target.value)} maxLength={100} />
        </label>
        <ErrorNote error={list.error ?? join.error} />
        {list.isPending && <p className="muted">Loading…</p>}
        {list.isSuccess && channels.length === 0 && <p className="muted">{q ? `No public channel is named like “${q}”.` : 'There are no public channels yet.'}</p>}
        <ul className="browse-list">
          {channels.map((channel) => (
            <li key={channel.id} className="browse-item" data-testid="browse-item">
              <div>
                <p className="browse-name">
                  <span aria-hidden="true" className="hash">
                    #
                  </span>
                  {channel.name}
                </p>
                {(channel.topic || channel.description) && <p className="muted small">{channel.topic || channel.description}</p>}
                <p className="muted small">{channel.member_count === 1 ? '1 member' : `${channel.member_count} members`}</p>
              </div>
              {channel.is_member ? (
                <button type="button" className="link-button" onClick={() => navigate(`/c/${channel.id}`)}>
                  Open
                </button>
              ) : (
                <button type="button" className="primary" disabled={join.isPending} onClick={() => join.mutate(channel.id)} aria-label={`Join ${channel.name}`}>
                  Join
                </button>
              )}
            </li>
          ))}
        </ul>
      </div>
    </section>
  )
}
