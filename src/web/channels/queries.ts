import { useQuery } from '@tanstack/react-query'
import { api, unwrap } from '../api/client.ts'
import { ApiError } from '../api/errors.ts'

/** An account awaiting the owner's approval is refused everything but /auth/me. */
export const isAwaitingApproval = (error: unknown) => error instanceof ApiError && error.code === 'APPROVAL_PENDING'

// While awaiting approval, the list is asked for again now and then: approval opens the workspace.
export const useChannels = () =>
  useQuery({
    queryKey: ['sidebar', 'channels'],
    queryFn: () => unwrap(api.GET('/api/v1/channels')),
    refetchInterval: (query) => (isAwaitingApproval(query.state.error) ? 30_000 : false),
  })

export const useDms = () => useQuery({ queryKey: ['sidebar', 'dms'], queryFn: () => unwrap(api.GET('/api/v1/dm')) })

export const useChannel = (id: string) => useQuery({ queryKey: ['channel', id], queryFn: () => unwrap(api.GET('/api/v1/channels/{id}', { params: { path: { id } } })) })
