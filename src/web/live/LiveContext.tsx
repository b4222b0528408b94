// One reconnecting socket per signed-in tab (src/sdk/realtime.ts). Events update the cached
// server state in place (messages, the sidebar's unread counts: channels/sidebar-state.ts) or
// mark it stale (members; the sidebar, debounced, for what an event cannot tell);
// `resync_required` refetches everything. The connection state is shared for the "reconnecting…" banner.
import { createContext, useContext, useEffect, useRef, useState, type ReactNode } from 'react'
import { useQueryClient, type QueryClient } from '@tanstack/react-query'
import type { MessageDeltaFrame } from '../../sdk/frames.ts'
import { RealtimeClient, type ControlFrame, type EventFrame, type RealtimeStatus, type SocketLike } from '../../sdk/realtime.ts'
import { useSignedInSession } from '../api/session.ts'
import { channelRemoved, isDm, messageArrived, reconcileSoon, resetSidebarState } from '../channels/sidebar-state.ts'
import { clearLive, forgetLive, rememberLive, updateLive } from '../messages/live-buffer.ts'
import { flushOutbox, openOutbox } from '../messages/outbox.ts'
import { approvalKeys } from '../approvals/queries.ts'
import { channelKeys } from '../channels/queries.ts'
import { messageKeys, threadKeys, type MessageWindow, type WindowPage } from '../messages/queries.ts'
import { messageDeleted, replyArrived, replyUpdated, type ThreadWindow } from '../messages/threads.ts'
import type { Message } from '../messages/types.ts'
import { applyPeopleFrame, ownPresence } from '../people/directory-state.ts'
import { mentionArrived, mentionKeys } from '../mentions/queries.ts'
import { notify } from './attention.ts'
import { fetchEventsSince } from './queries.ts'
import { setApproval } from './approvals.ts'
import { applyReactionEvent } from './reactions.ts'
import { applyThreadStatus, setStreamView, withDelta } from './streams.ts'
import { noteTyping, stopTyping, TYPING_SEND_MS } from './typing.ts'

const LiveStatus = createContext<RealtimeStatus>('connecting')
export const useLiveStatus = () => useContext(LiveStatus)

// Tells the conversation's other members that one is typing, at most once per TYPING_SEND_MS.
const SendTyping = createContext<(channelId: string) => void>(() => {})
export const useSendTyping = () => useContext(SendTyping)

/** Changes the loaded pages of every window open on the conversation (newest, or around a message). */
function updateMessages(queryClient: QueryClient, channelId: string, change: (messages: Message[], page: WindowPage, index: number) => Message[]) {
  queryClient.setQueriesData<MessageWindow>({ queryKey: messageKeys.channel(channelId) }, (data) => {
    if (!data) return data
    return { ...data, pages: data.pages.map((page, index) => ({ ...page, messages: change(page.messages, page, index) })) }
  })
}

/** Replies whose stream started here: the root counted them then, so their new_message does not count again. */
const streamedReplies = new Set<string>()

export function applyEvent(queryClient: QueryClient, event: EventFrame, me: string): void {
  const channelId = event.channel_id
  switch (event.type) {
    case 'new_message': {
      const { message } = event
      if (message.approval) void queryClient.invalidateQueries({ queryKey: approvalKeys.pending })
      // A reply is not in the channel's list (roots only): its root and its thread change.
      messageArrived(queryClient, channelId, message.created_at, message.author_id !== me)
      if (message.author_id !== me) void isDm(queryClient, channelId).then((dm) => dm && notify(channelId, message.author_name, message.text))
      if (message.thread_id) {
        // A streamed reply was counted at its start: its end only replaces it.
        if (streamedReplies.delete(message.id)) replyUpdated(queryClient, message)
        else replyArrived(queryClient, message)
        return
      }
      rememberLive(message)
      // Only a window that reaches the newest messages shows it; one still behind fetches it later.
      updateMessages(queryClient, channelId, (messages, page, index) => (index === 0 && !page.newer && !messages.some((m) => m.id === message.id) ? [message, ...messages] : messages))
      stopTyping(channelId, message.author_id)
      return
    }
    // Streaming messages (issue 25): shown from their start, growing by deltas, replaced at the end
    // (the new_message that follows finds it in the list already).
    case 'message_stream_started': {
      const { message } = event
      if (message.thread_id) {
        streamedReplies.add(message.id)
        return replyArrived(queryClient, message)
      }
      updateMessages(queryClient, channelId, (messages, page, index) => (index === 0 && !page.newer && !messages.some((m) => m.id === message.id) ? [message, ...messages] : messages))
      return
    }
    case 'message_stop_requested':
      setStreamView(queryClient, event.message_id, (view) => ({ ...view, stopRequested: true }))
      return
    case 'message_stream_finished':
    case 'message_updated': {
      const { message } = event
      if (message.thread_id) return replyUpdated(queryClient, message)
      updateLive(message)
      // An event's reactions say `reacted: false` for everyone: keep ours, kept by reaction frames.
      updateMessages(queryClient, channelId, (messages) => messages.map((m) => (m.id === message.id ? { ...message, reactions: m.reactions } : m)))
      return
    }
    case 'reaction_added':
    case 'reaction_removed':
      applyReactionEvent(queryClient, event, me)
      return
    case 'approval_decided':
    case 'approval_expired':
    case 'approval_cancelled':
      setApproval(queryClient, event.approval)
      return
    case 'message_deleted': {
      const id = event.message_id
      forgetLive(channelId, id)
      // A root with replies stays (a placeholder); a reply leaves its thread.
      if (messageDeleted(queryClient, channelId, id, event.thread_id ?? null)) updateMessages(queryClient, channelId, (messages) => messages.filter((m) => m.id !== id))
      // It may have been unread: the count comes from the server, with the next reconciliation.
      void reconcileSoon(queryClient)
      return
    }
    case 'message_mentioned': {
      // The Mentions view refreshes (when open); the message itself arrives as new_message /
      // message_updated. Unless its conversation is on screen (where reading it acknowledges it),
      // the badge counts one more until the server's count is asked for again.
      const { message } = event
      void queryClient.invalidateQueries({ queryKey: mentionKeys.all })
      if (!event.mentioned_ids.includes(me)) return
      const onScreen = document.visibilityState === 'visible' && (location.pathname === `/c/${channelId}` || location.pathname === '/mentions')
      if (!onScreen) mentionArrived(queryClient, channelId)
      // A DM's message is notified as such, mentions or not.
      void isDm(queryClient, channelId).then((dm) => dm || notify(channelId, `${message.author_name} mentioned you`, message.text))
      return
    }
    case 'member_joined':
    case 'member_left':
      void queryClient.invalidateQueries({ queryKey: channelKeys.members(channelId) })
      void queryClient.invalidateQueries({ queryKey: channelKeys.one(channelId) })
      if (event.member_id === me) void reconcileSoon(queryClient)
      return
    case 'channel_deleted':
      channelRemoved(queryClient, channelId)
      return
    default:
      // channel_created, channel_updated
      void reconcileSoon(queryClient)
      void queryClient.invalidateQueries({ queryKey: channelKeys.one(channelId) })
  }
}

/**
 * A delta grows the streaming message's text in place: in the channel's list for a root, in its
 * open thread panel for a reply. A missed frame refetches the conversation (or the thread).
 */
function applyDelta(queryClient: QueryClient, delta: MessageDeltaFrame): void {
  let missed = false
  const grow = (messages: Message[]) =>
    messages.map((m) => {
      if (m.id !== delta.message_id || m.stream_state !== 'streaming') return m
      const text = withDelta(m.text, delta)
      if (text === null) missed = true
      return text === null ? m : { ...m, text }
    })
  if (delta.thread_id) {
    const key = threadKeys.replies(delta.channel_id, delta.thread_id)
    queryClient.setQueryData<ThreadWindow>(key, (data) => data && { ...data, pages: data.pages.map((page) => ({ ...page, messages: grow(page.messages) })) })
    if (missed) void queryClient.invalidateQueries({ queryKey: key })
    return
  }
  updateMessages(queryClient, delta.channel_id, grow)
  if (missed) void queryClient.invalidateQueries({ queryKey: messageKeys.channel(delta.channel_id) })
}

const OUTBOX_RETRY_MS = 10_000

function socketUrl(token: string, since: string | null): string {
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:'
  const query = new URLSearchParams({ token })
  if (since) query.set('since', since)
  return `${scheme}//${location.host}/ws?${query.toString()}`
}

/**
 * What the page read before its socket was live may miss what happened meanwhile: the events after
 * `since` (the log's newest cursor when the page started) name the conversations to read again.
 * Refetching, unlike applying the events, cannot count anything twice.
 */
async function catchUp(queryClient: QueryClient, since: string): Promise<void> {
  let page
  try {
    page = await fetchEventsSince(since, 500)
  } catch {
    return void queryClient.invalidateQueries()
  }
  if (page.resync_required || page.has_more) return void queryClient.invalidateQueries()
  const touched = new Set(page.events.map((event) => event.channel_id))
  if (touched.size === 0) return
  void queryClient.invalidateQueries({ predicate: (query) => query.queryKey.some((part) => typeof part === 'string' && touched.has(part)) })
  void queryClient.invalidateQueries({ queryKey: mentionKeys.all })
  void queryClient.invalidateQueries({ queryKey: approvalKeys.all })
  void reconcileSoon(queryClient, 0)
}

export function LiveProvider({ head, enabled, children }: { head: string | null; enabled: boolean; children: ReactNode }) {
  const session = useSignedInSession()
  const queryClient = useQueryClient()
  const [status, setStatus] = useState<RealtimeStatus>('connecting')
  const [sendTyping, setSendTyping] = useState<(channelId: string) => void>(() => () => {})
  // Where the last socket of this person stopped: a new one (a new token) resumes there.
  const resume = useRef<{ userId: string; cursor: string | null } | null>(null)
  // The queue of unsent messages is this person's own.
  useEffect(() => openOutbox(session.user_id), [session.user_id])
  useEffect(() => {
    if (!enabled) return
    const from = resume.current?.userId === session.user_id ? resume.current.cursor : null
    let wasLive = from !== null
    const client = new RealtimeClient({
      cursor: from,
      url: (since) => socketUrl(session.token, since),
      // The DOM types its handlers with DOM event classes; SocketLike only needs their `data`/`code`.
      connect: (url) => new WebSocket(url) as unknown as SocketLike,
      onEvent: (event) => applyEvent(queryClient, event, session.user_id),
      onResync: () => void queryClient.invalidateQueries(),
      // Ephemeral frames: typing; presence, agents' status and people's names (in place).
      onFrame: (frame: ControlFrame) => {
        if (frame.type === 'typing') {
          if (frame.member_id !== session.user_id) noteTyping(frame.channel_id, frame.member_id, frame.member_name)
        } else if (frame.type === 'message_delta') applyDelta(queryClient, frame)
        else if (frame.type === 'message_status') setStreamView(queryClient, frame.message_id, (view) => ({ ...view, status: frame.status }))
        else if (frame.type === 'thread_status') applyThreadStatus(queryClient, frame)
        else applyPeopleFrame(queryClient, frame)
      },
      onStatus: (next) => {
        setStatus(next)
        if (next === 'live' || next === 'reconnecting') ownPresence(queryClient, session.user_id, next === 'live')
        if (next !== 'live') return
        // Whatever happened while we were away and the log cannot replay is fetched again. The
        // first connection starts where the log was when it became live (its ready frame's cursor):
        // if the log moved since the page started, what it read is checked.
        if (wasLive) void reconcileSoon(queryClient, 0)
        else if (head !== null && client.lastCursor !== head) void catchUp(queryClient, head)
        wasLive = true
        void flushOutbox()
      },
    })
    client.start()
    const lastSent = new Map<string, number>()
    setSendTyping(() => (channelId: string) => {
      const now = Date.now()
      if (now - (lastSent.get(channelId) ?? 0) < TYPING_SEND_MS) return
      if (client.send({ type: 'typing', channel_id: channelId })) lastSent.set(channelId, now)
    })
    const online = () => {
      client.reconnectNow()
      void flushOutbox()
    }
    window.addEventListener('online', online)
    // The browser may not notice a network that came back; try what waits now and then.
    const retry = setInterval(() => void flushOutbox(), OUTBOX_RETRY_MS)
    return () => {
      resume.current = { userId: session.user_id, cursor: client.lastCursor }
      clearInterval(retry)
      window.removeEventListener('online', online)
      client.stop()
      clearLive()
      resetSidebarState()
    }
  }, [enabled, head, session.token, session.user_id, queryClient])
  return (
    <LiveStatus.Provider value={status}>
      <SendTyping.Provider value={sendTyping}>{children}</SendTyping.Provider>
    </LiveStatus.Provider>
  )
}
