// The message list: newest at the bottom, day separators, and only the rows in view rendered
// (@tanstack/react-virtual), so a channel of 10,000 messages scrolls without putting them all in
// the page. Pages load as the person scrolls: older ones near the top; newer ones near the bottom
// when the list was opened at a message (a search result), which is highlighted and scrolled to.
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react'
import { useLocation } from 'wouter'
import { useVirtualizer } from '@tanstack/react-virtual'
import { useSignedInSession } from '../api/session.ts'
import { ErrorNote } from '../ui/ErrorNote.tsx'
import { dayKey, formatDay } from './format.ts'
import { MessageItem } from './MessageItem.tsx'
import { useMessages } from './queries.ts'
import { useReadMarker } from './read-marker.ts'
import type { Message } from './types.ts'

type Row = { kind: 'day'; key: string; label: string } | { kind: 'message'; key: string; message: Message } | { kind: 'unread'; key: string }

/** Where the conversation was read up to when it was opened, and how much came after. */
export interface UnreadAtOpen {
  /** The last message read (ids are UUIDv7: later ones compare greater), or null: none yet. */
  lastReadId: string | null
  count: number
}

const UNREAD_KEY = 'unread-line'

/** `complete`: the oldest message loaded is the conversation's first. */
function toRows(newestFirst: Message[], unread: UnreadAtOpen | null, me: string, complete: boolean): Row[] {
  const rows: Row[] = []
  let lastDay = ''
  let lined = !unread
  for (let i = newestFirst.length - 1; i >= 0; i -= 1) {
    const message = newestFirst[i]!
    const day = dayKey(message.created_at)
    if (day !== lastDay) {
      rows.push({ kind: 'day', key: `day-${day}`, label: formatDay(message.created_at) })
      lastDay = day
    }
    // The "new messages" line: before the first message someone else wrote after the marker,
    // once the message before it is loaded too (otherwise it is further back).
    if (!lined && message.author_id !== me && message.id > (unread!.lastReadId ?? '')) {
      lined = true
      if (i < newestFirst.length - 1 || complete) rows.push({ kind: 'unread', key: UNREAD_KEY })
    }
    rows.push({ kind: 'message', key: message.id, message })
  }
  return rows
}

/** How close (px) to an end of the list the next page starts loading. */
const PRELOAD = 300

export function MessageList({ channelId, keepsReadMarker, anchor, unread = null }: { channelId: string; keepsReadMarker: boolean; anchor: string | null; unread?: UnreadAtOpen | null }) {
  const session = useSignedInSession()
  const query = useMessages(channelId, anchor)
  const [, navigate] = useLocation()
  const scroller = useRef<HTMLDivElement>(null)
  // Opened at a message, the view starts there, not at the bottom.
  const atBottom = useRef(anchor === null)
  const messages = useMemo(() => query.data?.pages.flatMap((page) => page.messages) ?? [], [query.data])
  const complete = query.data ? !query.data.pages.at(-1)?.older : false
  const rows = useMemo(() => toRows(messages, unread, session.user_id, complete), [messages, unread, session.user_id, complete])
  const [awayFromBottom, setAwayFromBottom] = useState(false)
  const [lineSeen, setLineSeen] = useState(false)
  const [seekingUnread, setSeekingUnread] = useState(false)
  // The newest page loaded reaches the newest message of the conversation: live messages join here.
  const atLiveEnd = query.data ? !query.data.pages[0]?.newer : false
  const newestId = atLiveEnd ? messages[0]?.id : undefined

  // What is on screen counts as read: the server keeps the marker, so other devices agree.
  useReadMarker(channelId, keepsReadMarker ? newestId : undefined)

  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scroller.current,
    estimateSize: (index) => (rows[index]?.kind === 'day' ? 40 : 64),
    getItemKey: (index) => rows[index]!.key,
    overscan: 8,
  })

  // Opening the conversation, or a new message while at the bottom of the live end: show the
  // newest. Reaching the live end by loading newer pages does not count: the view stays put.
  const wasAtLiveEnd = useRef(atLiveEnd)
  useLayoutEffect(() => {
    const stick = atBottom.current && (wasAtLiveEnd.current || anchor === null)
    wasAtLiveEnd.current = atLiveEnd
    if (rows.length && stick) virtualizer.scrollToIndex(rows.length - 1, { align: 'end' })
  }, [newestId, rows.length > 0]) // eslint-disable-line react-hooks/exhaustive-deps

  // Opened at a message: once its page is in, bring it to the middle of the view and focus it.
  const anchorIndex = anchor ? rows.findIndex((row) => row.key === anchor) : -1
  const jumped = useRef(false)
  useLayoutEffect(() => {
    if (jumped.current || anchorIndex < 0) return
    jumped.current = true
    virtualizer.scrollToIndex(anchorIndex, { align: 'center' })
    requestAnimationFrame(() => {
      scroller.current?.querySelector<HTMLElement>('[data-highlighted="true"]')?.focus({ preventScroll: true })
    })
  }, [anchorIndex]) // eslint-disable-line react-hooks/exhaustive-deps

  const { hasNextPage, isFetchingNextPage, fetchNextPage, hasPreviousPage, isFetchingPreviousPage, fetchPreviousPage } = query
  const lastTop = useRef(0)
  const onScroll = () => {
    const el = scroller.current
    if (!el) return
    const fromBottom = el.scrollHeight - el.scrollTop - el.clientHeight
    // Only a move up leaves the bottom: a scroll down that falls short (the list following a burst
    // of messages while their rows are still being measured) must not stop it from following.
    const up = el.scrollTop < lastTop.current
    lastTop.current = el.scrollTop
    atBottom.current = fromBottom < 80 || (atBottom.current && !up)
    if (awayFromBottom === atBottom.current) setAwayFromBottom(!atBottom.current)
    // Not before the jump: the first scroll events come from bringing the message into view.
    if (anchor && !jumped.current) return
    if (el.scrollTop < PRELOAD && hasNextPage && !isFetchingNextPage) void fetchNextPage()
    if (fromBottom < PRELOAD && hasPreviousPage && !isFetchingPreviousPage) void fetchPreviousPage()
  }
  // A short window may not fill the screen: nothing to scroll, so load more now.
  useEffect(() => {
    const el = scroller.current
    if (!el || el.scrollHeight > el.clientHeight) return
    if (hasNextPage && !isFetchingNextPage) void fetchNextPage()
    else if (hasPreviousPage && !isFetchingPreviousPage) void fetchPreviousPage()
  }, [rows.length, hasNextPage, isFetchingNextPage, fetchNextPage, hasPreviousPage, isFetchingPreviousPage, fetchPreviousPage])

  // Older rows added above keep the rows in view where they are. (The oldest message, not the
  // first row: that is a day separator, which stays the same while a day's history loads.)
  const firstKey = messages.at(-1)?.id
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
  const missing = anchor !== null && query.isError

  // The line once in view needs no jump any more (checked on the page as laid out, after the
  // first scroll to the newest messages).
  const lineIndex = rows.findIndex((row) => row.kind === 'unread')
  useEffect(() => {
    if (lineSeen || lineIndex < 0 || !scroller.current) return
    const line = scroller.current.querySelector('.unread-line')?.getBoundingClientRect()
    const view = scroller.current.getBoundingClientRect()
    if (line && line.bottom > view.top && line.top < view.bottom) setLineSeen(true)
  }, [lineSeen, lineIndex, items])
  // Jumping to the first unread: older pages load until the line is among the rows.
  useEffect(() => {
    if (!seekingUnread) return
    if (lineIndex >= 0) {
      setSeekingUnread(false)
      setLineSeen(true)
      atBottom.current = false
      virtualizer.scrollToIndex(lineIndex, { align: 'start' })
    } else if (hasNextPage && !isFetchingNextPage) void fetchNextPage()
    else if (!hasNextPage) setSeekingUnread(false)
  }, [seekingUnread, lineIndex, hasNextPage, isFetchingNextPage, fetchNextPage, virtualizer])
  const showUnreadBar = unread !== null && unread.count > 0 && !lineSeen && anchor === null && query.isSuccess
  return (
    <>
      {showUnreadBar && (
        <div className="unread-bar" data-testid="unread-bar">
          <span>{unread.count === 1 ? '1 new message' : `${unread.count > 99 ? '99+' : unread.count} new messages`}</span>
          <button type="button" className="link-button" disabled={seekingUnread} onClick={() => setSeekingUnread(true)}>
            {seekingUnread ? 'Loading…' : 'Jump to first unread'}
          </button>
          <button type="button" className="link-button small" onClick={() => setLineSeen(true)} aria-label="Dismiss">
            ×
          </button>
        </div>
      )}
      <div className="message-area">
        <div className="message-scroller" ref={scroller} onScroll={onScroll} tabIndex={0} aria-label="Messages" role="log" aria-live="polite" aria-busy={query.isPending}>
          {/* Outside the list's box: that box is as tall as its rows (none here) and sits at the bottom. */}
          {query.isSuccess && rows.length === 0 && (
            <div className="empty-conversation" data-testid="empty-conversation">
              <p>No messages yet. Say hello!</p>
            </div>
          )}
          <div className="message-inner" style={{ height: virtualizer.getTotalSize() }}>
            {query.isPending && <p className="muted pad">Loading messages…</p>}
            {missing ? (
              <div className="empty-conversation">
                <p>That message could not be opened: it may have been deleted.</p>
              </div>
            ) : (
              <ErrorNote error={query.error} />
            )}
            {items.map((item) => {
              const row = rows[item.index]!
              return (
                <div key={item.key} data-index={item.index} ref={virtualizer.measureElement} className="row" style={{ transform: `translateY(${item.start}px)` }}>
                  {row.kind === 'day' ? (
                    <div className="day-separator" role="separator" aria-label={row.label}>
                      <span>{row.label}</span>
                    </div>
                  ) : row.kind === 'unread' ? (
                    <div className="unread-line" role="separator" aria-label="New messages" data-testid="unread-line">
                      <span>New messages</span>
                    </div>
                  ) : (
                    <MessageItem message={row.message} highlighted={row.key === anchor} />
                  )}
                </div>
              )
            })}
          </div>
          {(isFetchingNextPage || isFetchingPreviousPage) && (
            <p className={isFetchingNextPage ? 'loading-older muted small' : 'loading-newer muted small'} role="status">
              {isFetchingNextPage ? 'Loading older messages…' : 'Loading newer messages…'}
            </p>
          )}
        </div>
        {anchor === null && awayFromBottom && query.isSuccess && (
          <button
            type="button"
            className="jump-recent"
            onClick={() => {
              atBottom.current = true
              setAwayFromBottom(false)
              virtualizer.scrollToIndex(rows.length - 1, { align: 'end' })
            }}
          >
            Jump to recent ↓
          </button>
        )}
      </div>
      {anchor !== null && (query.isError || (query.isSuccess && !atLiveEnd)) && (
        <div className="jump-bar">
          <span className="muted small">{missing ? '' : 'You are reading older messages.'}</span>
          <button type="button" className="link-button" onClick={() => navigate(`/c/${channelId}`)}>
            Jump to the newest messages
          </button>
        </div>
      )}
    </>
  )
}
