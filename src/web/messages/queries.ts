// A conversation's history as a window that grows on demand in both directions. Opened normally
// it starts at the newest messages and grows back in time (`before`). Opened at a message (a
// search result) it starts with the page around that message and grows both ways: back with
// `before`, forward with `after` until it reaches the newest, from where live messages join it.
import { useInfiniteQuery, type InfiniteData } from '@tanstack/react-query'
import { api, unwrap } from '../api/client.ts'
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

export const messagesKey = (channelId: string, anchor: string | null) => (anchor ? ['messages', channelId, 'around', anchor] : ['messages', channelId])

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
    queryKey: messagesKey(channelId, anchor),
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- TanStack infers the page parameter type from initialPageParam: without it, it would be { around } | null only
    initialPageParam: (anchor ? { around: anchor } : null) as PageParam,
    queryFn: ({ pageParam }) => fetchPage(channelId, pageParam),
    // "next" is older (appended), "previous" is newer (prepended): pages[0] is the newest.
    getNextPageParam: (oldest) => (oldest.older && oldest.before ? { before: oldest.before } : undefined),
    getPreviousPageParam: (newest) => (newest.newer && newest.after ? { after: newest.after } : undefined),
    // Live events keep the cache current; refetching would drop the pages loaded so far.
    staleTime: Infinity,
  })
