// Threads in the web UI: a thread's replies (newest page first, older ones on demand), and how
// live events change the cached lists. The channel's list holds roots only (`threads=roots`); a
// reply that arrives live updates its root's summary there and joins its thread if it is open.
import { useInfiniteQuery, type InfiniteData, type QueryClient } from '@tanstack/react-query'
import { createContext, useContext } from 'react'
import { api, unwrap } from '../api/client.ts'
import { messageKeys, threadKeys, type MessageWindow } from './queries.ts'
import type { Message, MessagePage } from './types.ts'

export const REPLIES_PAGE = 50

export type ThreadWindow = InfiniteData<MessagePage, string | null>

/** The replies of a thread, newest first in each page; pages go back in time. */
export const useReplies = (channelId: string, rootId: string) =>
  useInfiniteQuery({
    queryKey: threadKeys.replies(channelId, rootId),
    initialPageParam: null as string | null,
    queryFn: ({ pageParam }) =>
      unwrap(
        api.GET('/api/v1/channels/{id}/messages/{message_id}/replies', {
          params: { path: { id: channelId, message_id: rootId }, query: { limit: REPLIES_PAGE, ...(pageParam ? { before: pageParam } : {}) } },
        }),
      ),
    getNextPageParam: (oldest) => (oldest.has_more && oldest.next_before ? oldest.next_before : undefined),
    staleTime: Infinity,
  })

/** Rendering inside the thread panel: the messages there offer no thread of their own. */
export const InThreadPanel = createContext(false)
export const useInThreadPanel = () => useContext(InThreadPanel)

function changeRoot(queryClient: QueryClient, channelId: string, rootId: string, change: (root: Message) => Message) {
  queryClient.setQueriesData<MessageWindow>(
    { queryKey: messageKeys.channel(channelId) },
    (data) => data && { ...data, pages: data.pages.map((page) => ({ ...page, messages: page.messages.map((m) => (m.id === rootId ? change(m) : m)) })) },
  )
  queryClient.setQueryData<Message>(messageKeys.one(channelId, rootId), (root) => root && change(root))
}

/** A reply arrived: its root's summary moves on (as the server's did), and an open thread shows it. */
export function replyArrived(queryClient: QueryClient, reply: Message): void {
  const rootId = reply.thread_id!
  changeRoot(queryClient, reply.channel_id, rootId, (root) => ({
    ...root,
    reply_count: root.reply_count + 1,
    last_reply_at: reply.created_at,
    recent_replier_ids: [reply.author_id, ...root.recent_replier_ids.filter((id) => id !== reply.author_id)].slice(0, 3),
  }))
  queryClient.setQueryData<ThreadWindow>(threadKeys.replies(reply.channel_id, rootId), (data) => {
    if (!data || data.pages[0]?.messages.some((m) => m.id === reply.id)) return data
    const [newest, ...rest] = data.pages
    return { ...data, pages: [{ ...newest!, messages: [reply, ...newest!.messages] }, ...rest] }
  })
}

/** A reply was edited: the open thread shows the new text. */
export function replyUpdated(queryClient: QueryClient, reply: Message): void {
  queryClient.setQueryData<ThreadWindow>(
    threadKeys.replies(reply.channel_id, reply.thread_id!),
    (data) => data && { ...data, pages: data.pages.map((page) => ({ ...page, messages: page.messages.map((m) => (m.id === reply.id ? reply : m)) })) },
  )
}

/**
 * A message was deleted. A reply: its thread and its root are fetched again (the server recounted
 * them). A root that has replies stays as a placeholder, as the server keeps it. Returns true when
 * the caller must still remove the message from the channel's list.
 */
export function messageDeleted(queryClient: QueryClient, channelId: string, messageId: string, threadId: string | null): boolean {
  if (threadId) {
    void queryClient.invalidateQueries({ queryKey: threadKeys.replies(channelId, threadId) })
    void queryClient.invalidateQueries({ queryKey: messageKeys.one(channelId, threadId) })
    changeRoot(queryClient, channelId, threadId, (root) => ({ ...root, reply_count: Math.max(0, root.reply_count - 1) }))
    return false
  }
  let kept = false
  changeRoot(queryClient, channelId, messageId, (root) => {
    if (root.reply_count === 0) return root
    kept = true
    const { attachment: _gone, ...rest } = root
    return { ...rest, text: '', deleted: true }
  })
  if (kept) void queryClient.invalidateQueries({ queryKey: messageKeys.one(channelId, messageId) })
  return !kept
}
