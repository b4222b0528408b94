// Payloads that several services emit, built in one place so they cannot drift apart: a channel
// is created by the channels module, by opening a DM and by the bootstrap.
import type { EventPayload } from './types.ts'

/** The fields of a channel row the events carry. */
export interface ChannelLike {
  id: string
  name: string
  description: string
  topic: string | null
  type: 'channel' | 'dm'
  createdAt: Date
}

/** The channel as channel.created and channel.updated carry it. */
export function eventChannel(c: ChannelLike): EventPayload<'channel.updated'>['channel'] {
  return { id: c.id, name: c.name, description: c.description, topic: c.topic, type: c.type, created_at: c.createdAt.toISOString() }
}

/** The payload of member.joined. */
export function memberJoined(channel: ChannelLike, member: { id: string; type: 'AGENT' | 'HUMAN'; name: string }): EventPayload<'member.joined'> {
  return { channel_id: channel.id, member_id: member.id, member_type: member.type, member_name: member.name, channel: eventChannel(channel) }
}

/** The payload of channel.created. */
export function channelCreated(channel: ChannelLike, creator: { id: string; type: 'AGENT' | 'HUMAN' }): EventPayload<'channel.created'> {
  return { channel: eventChannel(channel), creator_id: creator.id, creator_type: creator.type }
}
