// The message object of the API, as tests expect it: its keys (a message without a file), and a
// complete one built from the few fields a test cares about (the rest as a new plain message has them).
import { toMessageDto } from '../../src/modules/messages/schemas.ts'
import type { Message } from './types.ts'

export const MESSAGE_KEYS = [
  'approval',
  'author_id',
  'author_name',
  'author_type',
  'chain_depth',
  'channel_id',
  'created_at',
  'deleted',
  'edited_at',
  'id',
  'in_reply_to_event',
  'last_reply_at',
  'mentions',
  'reactions',
  'recent_replier_ids',
  'reply_count',
  'stream_state',
  'text',
  'thread_id',
] as const

/** A complete message object, built by the service's own mapping from the fields a test names. */
export function messageDto(m: Pick<Message, 'id' | 'channel_id' | 'author_id' | 'author_name' | 'text' | 'created_at'> & Partial<Message>): Message {
  const base = toMessageDto(
    {
      id: m.id,
      channelId: m.channel_id,
      authorId: m.author_id,
      authorName: m.author_name,
      authorType: 'AGENT',
      text: m.text,
      createdAt: new Date(m.created_at),
      editedAt: null,
      inReplyToEvent: null,
      chainDepth: 1,
    },
    '',
  )
  return { ...base, ...m }
}
