import { useInfiniteQuery } from '@tanstack/react-query'
import { api, unwrap } from '../api/client.ts'

export const MENTIONS_PAGE = 30

/** The signed-in person's mentions, newest first, a page at a time. */
export const useMentions = () =>
  useInfiniteQuery({
    queryKey: ['mentions'],
    queryFn: ({ pageParam }) => unwrap(api.GET('/api/v1/mentions', { params: { query: { limit: MENTIONS_PAGE, ...(pageParam ? { cursor: pageParam } : {}) } } })),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => (last.has_more ? last.next_cursor : null),
    staleTime: 0,
  })
