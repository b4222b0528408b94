// Channels, members and messages through the real REST API (real headers, one status each), for
// tests whose subject is something else that needs a conversation to exist.
import { bearer, expectStatus, type Api } from './http.ts'
import type { Channel, MemberAdded, Message } from './types.ts'

export interface CreateChannelOptions {
  /** Users or agents the creator adds after creating it (the creator is a member already). */
  members?: string[]
  /** Default `<name> channel`; null sends none (as the web UI's own form may). */
  description?: string | null
  topic?: string
}

/** Creates a channel as `token` (who joins it), adds `members`, and returns the channel as created. */
export async function createChannel(api: Api, token: string, name: string, options: CreateChannelOptions = {}): Promise<Channel> {
  const { members = [], description = `${name} channel`, topic } = options
  const payload = { name, ...(description === null ? {} : { description }), ...(topic === undefined ? {} : { topic }) }
  const res = await api({ method: 'POST', url: '/api/v1/channels', headers: bearer(token), payload })
  const channel = expectStatus<Channel>(res, 201, 'create channel')
  for (const memberId of members) await addMember(api, token, channel.id, memberId)
  return channel
}

/** createChannel for tests that only need the id. */
export async function createChannelId(api: Api, token: string, name: string, members: string[] = []): Promise<string> {
  return (await createChannel(api, token, name, { members })).id
}

export async function addMember(api: Api, token: string, channelId: string, memberId: string): Promise<MemberAdded> {
  const res = await api({ method: 'POST', url: `/api/v1/channels/${channelId}/members`, headers: bearer(token), payload: { user_id: memberId } })
  return expectStatus<MemberAdded>(res, 201, 'add member')
}

export async function removeMember(api: Api, token: string, channelId: string, memberId: string): Promise<void> {
  const res = await api({ method: 'DELETE', url: `/api/v1/channels/${channelId}/members/${memberId}`, headers: bearer(token) })
  if (res.statusCode >= 300) throw new Error(`remove member: ${res.statusCode} ${res.body}`)
}

/** Posts `text` to a channel (or DM) as `token`; returns the message as created. */
export async function post(api: Api, token: string, channelId: string, text: string): Promise<Message> {
  const res = await api({ method: 'POST', url: `/api/v1/channels/${channelId}/messages`, headers: bearer(token), payload: { text } })
  return expectStatus<Message>(res, 201, 'post')
}
