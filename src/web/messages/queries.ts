// A conversation's history as a window that grows on demand in both directions. Opened normally
// it starts at the newest messages and grows back in time (`before`). Opened at a message (a
// search result) it starts with the page around that message and grows both ways: back with
// `before`, forward with `after` until it reaches the newest, from where live messages join it.
import { useInfiniteQuery, useQuery, type InfiniteData } from '@tanstack/react-query'
import { api, unwrap } from '../api/client.ts'
import { ApiError } from '../api/errors.ts'
import type { StreamView, ThreadStatusEntry } from '../live/streams.ts'
import { liveNewerThan } from './live-buffer.ts'
import type { Message } from './types.ts'

export const PAGE_SIZE = 50
/** Messages on each side of the one jumped to (plus the message itself). */
export const AROUND = 25

/** One page of the window, newest first. */
export interface WindowPage {
  messages: Message[]
  /** Older messages exist before this page (for the oldest page loaded: load more on scroll up). */
  older: boolean
  /** Newer messages exist after this page (for the newest page loaded: not yet at the live end). */
  newer: boolean
  /** Cursors to continue from: the oldest and newest message ids this page was fetched with. */
  before: string | null
  after: string | null
}

export type PageParam = { before: string } | { after: string } | { around: string } | null
export type MessageWindow = InfiniteData<WindowPage, PageParam>

export const messageKeys = {
  /** Every window open on a conversation: a prefix of `window`'s keys. */
  channel: (channelId: string) => ['messages', channelId] as const,
  window: (channelId: string, anchor: string | null) => (anchor ? (['messages', channelId, 'around', anchor] as const) : (['messages', channelId] as const)),
  /** One message on its own (a thread's root in the thread panel). */
  one: (channelId: string, messageId: string) => ['message', channelId, messageId] as const,
  /** A streaming message's status and Stop (live/streams.ts keeps it current). */
  stream: (messageId: string) => ['stream', messageId] as const,
}

export const threadKeys = {
  /** Every thread of a conversation: a prefix of `replies`' keys. */
  channel: (channelId: string) => ['thread', channelId] as const,
  replies: (channelId: string, rootId: string) => ['thread', channelId, rootId] as const,
  /** Each agent's status on a thread without a stream. */
  status: (channelId: string, rootId: string) => ['thread-status', channelId, rootId] as const,
}

type Query = { limit: number; before?: string; after?: string }
// Thread replies are read in the thread panel, not in the channel's list.
const list = (channelId: string, query: Query) => unwrap(api.GET('/api/v1/channels/{id}/messages', { params: { path: { id: channelId }, query: { ...query, threads: 'roots' } } }))

/** A page that reaches the newest messages takes in those that arrived live while it was fetched. */
function withLive(channelId: string, page: WindowPage): WindowPage {
  if (page.newer) return page
  const missed = liveNewerThan(channelId, page.messages[0]?.id ?? page.after)
  return missed.length ? { ...page, messages: [...missed, ...page.messages], after: missed[0]!.id } : page
}

async function fetchPage(channelId: string, param: PageParam): Promise<WindowPage> {
  return withLive(channelId, await fetchRawPage(channelId, param))
}

async function fetchRawPage(channelId: string, param: PageParam): Promise<WindowPage> {
  if (param && 'around' in param) {
    const id = param.around
    const [target, older, newer] = await Promise.all([
      unwrap(api.GET('/api/v1/channels/{id}/messages/{message_id}', { params: { path: { id: channelId, message_id: id } } })),
      list(channelId, { limit: AROUND, before: id }),
      list(channelId, { limit: AROUND, after: id }),
    ])
    return {
      messages: [...newer.messages, target, ...older.messages],
      older: older.has_more,
      newer: newer.has_more,
      before: older.next_before ?? id,
      after: newer.next_after ?? id,
    }
  }
  if (param && 'after' in param) {
    const page = await list(channelId, { limit: PAGE_SIZE, after: param.after })
    return { messages: page.messages, older: true, newer: page.has_more, before: page.next_before ?? param.after, after: page.next_after ?? param.after }
  }
  const page = await list(channelId, { limit: PAGE_SIZE, ...(param ? { before: param.before } : {}) })
  return { messages: page.messages, older: page.has_more, newer: param !== null, before: page.next_before ?? param?.before ?? null, after: page.next_after ?? null }
}

/** The conversation's window; `anchor` is the message to open at, or null for the newest. */
export const useMessages = (channelId: string, anchor: string | null) =>
  useInfiniteQuery({
    queryKey: messageKeys.window(channelId, anchor),
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- TanStack infers the page parameter type from initialPageParam: without it, it would be { around } | null only
    initialPageParam: (anchor ? { around: anchor } : null) as PageParam,
    queryFn: ({ pageParam }) => fetchPage(channelId, pageParam),
    // "next" is older (appended), "previous" is newer (prepended): pages[0] is the newest.
    getNextPageParam: (oldest) => (oldest.older && oldest.before ? { before: oldest.before } : undefined),
    getPreviousPageParam: (newest) => (newest.newer && newest.after ? { after: newest.after } : undefined),
    // Live events keep the cache current; refetching would drop the pages loaded so far.
    staleTime: Infinity,
  })

export const useMessage = (channelId: string, messageId: string) =>
  useQuery({
    queryKey: messageKeys.one(channelId, messageId),
    queryFn: () => unwrap(api.GET('/api/v1/channels/{id}/messages/{message_id}', { params: { path: { id: channelId, message_id: messageId } } })),
    staleTime: Infinity,
  })

/** A reply in a thread; the idempotency key makes a retried send post it once. */
export const postReply = (channelId: string, rootId: string, draft: { text: string; key: string }) =>
  unwrap(
    api.POST('/api/v1/channels/{id}/messages', {
      params: { path: { id: channelId }, header: { 'idempotency-key': draft.key } },
      body: { text: draft.text, thread_id: rootId },
    }),
  )

type MessagePath = { id: string; message_id: string }
const pathOf = (message: Pick<Message, 'channel_id' | 'id'>): MessagePath => ({ id: message.channel_id, message_id: message.id })

export const editMessage = (message: Pick<Message, 'channel_id' | 'id'>, text: string) =>
  unwrap(api.PATCH('/api/v1/channels/{id}/messages/{message_id}', { params: { path: pathOf(message) }, body: { text } }))

export const deleteMessage = (message: Pick<Message, 'channel_id' | 'id'>) => unwrap(api.DELETE('/api/v1/channels/{id}/messages/{message_id}', { params: { path: pathOf(message) } }))

/** Adds or removes one's reaction: adding answers the message's reactions, removing answers null. */
export async function setReaction(message: Pick<Message, 'channel_id' | 'id'>, emoji: string, on: boolean) {
  const params = { params: { path: { ...pathOf(message), emoji } } }
  if (on) return (await unwrap(api.PUT('/api/v1/channels/{id}/messages/{message_id}/reactions/{emoji}', params))).reactions
  await unwrap(api.DELETE('/api/v1/channels/{id}/messages/{message_id}/reactions/{emoji}', params))
  return null
}

type ApprovalDecision = { decision: NonNullable<Message['approval']>['choices'][number]; arguments?: Record<string, unknown>; comment?: string; digest: string }

export const decideApproval = (message: Pick<Message, 'channel_id' | 'id'>, body: ApprovalDecision) =>
  unwrap(api.POST('/api/v1/channels/{id}/messages/{message_id}/approval', { params: { path: pathOf(message) }, body }))

/** A streaming message's status, read once (a late joiner or a reload); frames keep it current after. */
export const useStreamView = (message: Pick<Message, 'channel_id' | 'id'>) =>
  useQuery<StreamView>({
    queryKey: messageKeys.stream(message.id),
    queryFn: async () => {
      const info = await unwrap(api.GET('/api/v1/channels/{id}/messages/{message_id}/stream', { params: { path: pathOf(message) } }))
      return { status: info.status, stopRequested: info.stop_requested }
    },
    staleTime: Infinity,
  })

export const stopStream = (message: Pick<Message, 'channel_id' | 'id'>) => unwrap(api.POST('/api/v1/channels/{id}/messages/{message_id}/stream/stop', { params: { path: pathOf(message) } }))

/** The agents' statuses on a thread, read only when `read` (the thread panel); frames keep them current. */
export const useThreadStatus = (channelId: string, rootId: string, read: boolean) =>
  useQuery<ThreadStatusEntry[]>({
    queryKey: threadKeys.status(channelId, rootId),
    queryFn: async () => {
      const page = await unwrap(api.GET('/api/v1/channels/{id}/messages/{message_id}/thread/status', { params: { path: { id: channelId, message_id: rootId } } }))
      return page.statuses.map((s) => ({ agent_id: s.agent_id, agent_name: s.agent_name, status: s.status }))
    },
    enabled: read,
    staleTime: Infinity,
  })

/** An attachment's bytes: downloads need the session's credential, so they go through the client. */
export async function fetchAttachment(id: string): Promise<Blob> {
  const { data, response } = await api.GET('/api/v1/attachments/{id}', { params: { path: { id } }, parseAs: 'blob' })
  if (!response.ok || !data) throw new ApiError(response.status, response.status === 404 ? 'NOT_FOUND' : 'HTTP_' + response.status, 'download failed')
  return data
}
