import { useInfiniteQuery, useQuery, type QueryClient } from '@tanstack/react-query'
import { api, unwrap } from '../api/client.ts'
import { sidebarKeys } from '../channels/queries.ts'

export const MENTIONS_PAGE = 30

export const mentionKeys = {
  all: ['mentions'] as const,
  /** Under the sidebar's key: a reconciliation asks for it again with the lists. */
  count: [...sidebarKeys.all, 'mention-count'] as const,
}

/** The signed-in person's mentions, newest first, a page at a time. */
export const useMentions = () =>
  useInfiniteQuery({
    queryKey: mentionKeys.all,
    queryFn: ({ pageParam }) => unwrap(api.GET('/api/v1/mentions', { params: { query: { limit: MENTIONS_PAGE, ...(pageParam ? { cursor: pageParam } : {}) } } })),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => (last.has_more ? last.next_cursor : null),
    staleTime: 0,
  })

/**
 * The mentions badge: how many mentions of this person are still in their inbox on the server
 * (reading a conversation up to a mention acknowledges it there, on every device), and the
 * conversations holding anything of their inbox, so that reading elsewhere asks for nothing.
 * Under the sidebar's key: a reconciliation (reconnect, joins) asks for it again with the lists.
 */
export interface MentionCount {
  mentions: number
  /** Conversations with unacknowledged inbox items (any kind: a superset of those with mentions). */
  channels: string[]
  /** The server lists at most 50 conversations: any other may hold a mention too. */
  capped: boolean
}

const LISTED_CHANNELS_MAX = 50

export const useMentionCount = (enabled = true) =>
  useQuery({
    queryKey: mentionKeys.count,
    enabled,
    // One item is the least the inbox answers; its counts are what the badge needs.
    queryFn: async (): Promise<MentionCount> => {
      const { counts } = await unwrap(api.GET('/api/v1/inbox', { params: { query: { limit: 1 } } }))
      return { mentions: counts.by_kind.mention, channels: counts.by_channel.map((c) => c.channel_id), capped: counts.by_channel.length >= LISTED_CHANNELS_MAX }
    },
    staleTime: Infinity,
  })

/** A mention of this person arrived (a `message_mentioned` event) while its conversation was not on screen. */
export function mentionArrived(queryClient: QueryClient, channelId: string): void {
  queryClient.setQueryData<MentionCount>(mentionKeys.count, (count) =>
    count ? { ...count, mentions: count.mentions + 1, channels: count.channels.includes(channelId) ? count.channels : [...count.channels, channelId] } : count,
  )
}

/** The read marker of a conversation moved: if it may have held a mention, the server says what is left. */
export function conversationRead(queryClient: QueryClient, channelId: string): void {
  const count = queryClient.getQueryData<MentionCount>(mentionKeys.count)
  if (!count || count.mentions === 0 || !(count.capped || count.channels.includes(channelId))) return
  void queryClient.invalidateQueries({ queryKey: mentionKeys.count })
}
