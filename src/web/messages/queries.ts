import { useInfiniteQuery } from '@tanstack/react-query'
import { api, unwrap } from '../api/client.ts'

export const PAGE_SIZE = 50

/** The conversation's messages, newest page first; older pages follow the `before` cursor. */
export const useMessages = (channelId: string) =>
  useInfiniteQuery({
    queryKey: ['messages', channelId],
    initialPageParam: null as string | null,
    queryFn: ({ pageParam }) =>
      unwrap(
        api.GET('/api/v1/channels/{id}/messages', {
          params: { path: { id: channelId }, query: { limit: PAGE_SIZE, ...(pageParam ? { before: pageParam } : {}) } },
        }),
      ),
    getNextPageParam: (last) => (last.has_more ? last.next_before : null),
    // Live events keep the cache current; refetching would drop the older pages loaded so far.
    staleTime: Infinity,
  })
