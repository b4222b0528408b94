// The message list: newest at the bottom, older pages loaded when scrolled near the top, day
// separators, and only the rows in view rendered (@tanstack/react-virtual), so a channel of
// 10,000 messages scrolls without putting them all in the page.
import { useEffect, useLayoutEffect, useMemo, useRef } from 'react'
import { useVirtualizer } from '@tanstack/react-virtual'
import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api, unwrap } from '../api/client.ts'
import type { Session } from '../api/session.ts'
import { ErrorNote } from '../ui/ErrorNote.tsx'
import { dayKey, formatDay } from './format.ts'
import { MessageItem } from './MessageItem.tsx'
import { useMessages } from './queries.ts'
import type { Message } from './types.ts'

type Row = { kind: 'day'; key: string; label: string } | { kind: 'message'; key: string; message: Message }

function toRows(newestFirst: Message[]): Row[] {
  const rows: Row[] = []
  let lastDay = ''
  for (let i = newestFirst.length - 1; i >= 0; i -= 1) {
    const message = newestFirst[i]!
    const day = dayKey(message.created_at)
    if (day !== lastDay) {
      rows.push({ kind: 'day', key: `day-${day}`, label: formatDay(message.created_at) })
      lastDay = day
    }
    rows.push({ kind: 'message', key: message.id, message })
  }
  return rows
}

export function MessageList({ channelId, session, keepsReadMarker }: { channelId: string; session: Session; keepsReadMarker: boolean }) {
  const query = useMessages(channelId)
  const scroller = useRef<HTMLDivElement>(null)
  const atBottom = useRef(true)
  const messages = useMemo(() => query.data?.pages.flatMap((page) => page.messages) ?? [], [query.data])
  const rows = useMemo(() => toRows(messages), [messages])
  const newestId = messages[0]?.id

  // What is on screen counts as read: the server keeps the marker, so other devices agree.
  const queryClient = useQueryClient()
  const markRead = useMutation({
    mutationFn: (messageId: string) => unwrap(api.PUT('/api/v1/channels/{id}/read', { params: { path: { id: channelId } }, body: { message_id: messageId } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['sidebar'] }),
  })
  const { mutate: mark } = markRead
  useEffect(() => {
    if (!keepsReadMarker || !newestId) return
    const markWhenVisible = () => {
      if (document.visibilityState === 'visible') mark(newestId)
    }
    markWhenVisible()
    document.addEventListener('visibilitychange', markWhenVisible)
    return () => document.removeEventListener('visibilitychange', markWhenVisible)
  }, [keepsReadMarker, newestId, mark])

  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scroller.current,
    estimateSize: (index) => (rows[index]?.kind === 'day' ? 40 : 64),
    getItemKey: (index) => rows[index]!.key,
    overscan: 8,
  })

  // Opening the conversation, or a new message while at the bottom: show the newest.
  useLayoutEffect(() => {
    if (rows.length && atBottom.current) virtualizer.scrollToIndex(rows.length - 1, { align: 'end' })
  }, [newestId, rows.length > 0]) // eslint-disable-line react-hooks/exhaustive-deps

  const { hasNextPage, isFetchingNextPage, fetchNextPage } = query
  const onScroll = () => {
    const el = scroller.current
    if (!el) return
    atBottom.current = el.scrollHeight - el.scrollTop - el.clientHeight < 80
    if (el.scrollTop < 300 && hasNextPage && !isFetchingNextPage) void fetchNextPage()
  }
  // A short first page may not fill the screen: nothing to scroll, so load more now.
  useEffect(() => {
    const el = scroller.current
    if (el && el.scrollHeight <= el.clientHeight && hasNextPage && !isFetchingNextPage) void fetchNextPage()
  }, [rows.length, hasNextPage, isFetchingNextPage, fetchNextPage])

  // Older rows added above keep the rows in view where they are.
  const firstKey = rows[0]?.key
  const previous = useRef<{ firstKey?: string; height: number; top: number }>({ height: 0, top: 0 })
  useLayoutEffect(() => {
    const el = scroller.current
    if (!el) return
    const before = previous.current
    if (before.firstKey && firstKey !== before.firstKey && !atBottom.current) {
      el.scrollTop = before.top + (el.scrollHeight - before.height)
    }
    previous.current = { firstKey, height: el.scrollHeight, top: el.scrollTop }
  })

  const items = virtualizer.getVirtualItems()
  return (
    <div className="message-scroller" ref={scroller} onScroll={onScroll} tabIndex={0} aria-label="Messages" role="log" aria-live="polite">
      <div className="message-inner" style={{ height: virtualizer.getTotalSize() }}>
        {query.isPending && <p className="muted pad">Loading messages…</p>}
        <ErrorNote error={query.error} />
        {query.isSuccess && rows.length === 0 && (
          <div className="empty-conversation">
            <p>No messages yet. Say hello!</p>
          </div>
        )}
        {items.map((item) => {
          const row = rows[item.index]!
          return (
            <div key={item.key} data-index={item.index} ref={virtualizer.measureElement} className="row" style={{ transform: `translateY(${item.start}px)` }}>
              {row.kind === 'day' ? (
                <div className="day-separator" role="separator" aria-label={row.label}>
                  <span>{row.label}</span>
                </div>
              ) : (
                <MessageItem message={row.message} session={session} />
              )}
            </div>
          )
        })}
      </div>
      {isFetchingNextPage && (
        <p className="loading-older muted small" role="status">
          Loading older messages…
        </p>
      )}
    </div>
  )
}
