// Channels and DMs: the query keys they are cached under and the API calls that read and change
// them. Components and the live layer use these keys, never arrays of their own, so what one
// sets or invalidates is what another reads.
import { useQuery } from '@tanstack/react-query'
import { api, unwrap } from '../api/client.ts'
import { ApiError } from '../api/errors.ts'
import { channelKeys, sidebarKeys } from './keys.ts'

export { channelKeys, sidebarKeys } from './keys.ts'

/** An account awaiting the owner's approval is refused everything but /auth/me. */
export const isAwaitingApproval = (error: unknown) => error instanceof ApiError && error.code === 'APPROVAL_PENDING'

// While awaiting approval, the list is asked for again now and then: approval opens the workspace.
export const useChannels = () =>
  useQuery({
    queryKey: sidebarKeys.channels,
    queryFn: () => unwrap(api.GET('/api/v1/channels')),
    refetchInterval: (query) => (isAwaitingApproval(query.state.error) ? 30_000 : false),
  })

export const useDms = () => useQuery({ queryKey: sidebarKeys.dms, queryFn: () => unwrap(api.GET('/api/v1/dm')) })

export const useChannel = (id: string) => useQuery({ queryKey: channelKeys.one(id), queryFn: () => unwrap(api.GET('/api/v1/channels/{id}', { params: { path: { id } } })) })

export const useMembers = (channelId: string) =>
  useQuery({ queryKey: channelKeys.members(channelId), queryFn: () => unwrap(api.GET('/api/v1/channels/{id}/members', { params: { path: { id: channelId } } })) })

/** The public channels whose name holds `q` (every one for ''); the previous list stays while the next loads. */
export const useBrowse = (q: string) =>
  useQuery({
    queryKey: channelKeys.browse(q),
    queryFn: () => unwrap(api.GET('/api/v1/channels/browse', { params: { query: q ? { q } : {} } })),
    placeholderData: (previous) => previous,
  })

export const createChannel = (name: string) => unwrap(api.POST('/api/v1/channels', { body: { name } }))

export const joinChannel = (id: string) => unwrap(api.POST('/api/v1/channels/{id}/join', { params: { path: { id } } }))

export const addMember = (channelId: string, userId: string) => unwrap(api.POST('/api/v1/channels/{id}/members', { params: { path: { id: channelId } }, body: { user_id: userId } }))

export const removeMember = (channelId: string, userId: string) => unwrap(api.DELETE('/api/v1/channels/{id}/members/{user_id}', { params: { path: { id: channelId, user_id: userId } } }))

/** The DM with this person: the API answers the existing one when the pair already has one. */
export const openDm = (participantId: string) => unwrap(api.POST('/api/v1/dm', { body: { participant_id: participantId } }))
