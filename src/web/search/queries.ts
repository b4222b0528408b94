// Message search: the query key of a search's results and the call that finds them.
import { useQuery } from '@tanstack/react-query'
import { api, unwrap } from '../api/client.ts'

export const SEARCH_LIMIT = 50

export const searchKeys = {
  results: (q: string) => ['search', q] as const,
}

/** The best matches for `q` (nothing is asked for an empty one), read again on every visit. */
export const useSearchResults = (q: string) =>
  useQuery({
    queryKey: searchKeys.results(q),
    queryFn: () => unwrap(api.GET('/api/v1/messages/search', { params: { query: { q, limit: SEARCH_LIMIT } } })),
    enabled: q !== '',
    staleTime: 0,
  })
