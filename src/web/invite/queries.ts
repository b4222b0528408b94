// An invite: who it is for (GET /api/v1/invite, no account needed) and accepting it with a
// password, which answers the new session.
import { useQuery } from '@tanstack/react-query'
import { api, unwrap } from '../api/client.ts'

export const inviteKeys = {
  one: (token: string) => ['invite', token] as const,
}

/** Read once: an unknown, used or expired invite is an answer, not a failure to retry. */
export const useInvite = (token: string) =>
  useQuery({
    queryKey: inviteKeys.one(token),
    queryFn: () => unwrap(api.GET('/api/v1/invite', { params: { query: { token } } })),
    enabled: token !== '',
    retry: false,
  })

export const acceptInvite = (body: { token: string; password: string; display_name?: string }) => unwrap(api.POST('/api/v1/invite/accept', { body }))
