// The message object of the API, as tests expect it: its keys (a message without a file), and a
// complete one built from the few fields a test cares about (the rest as a new plain message has them).
import type { Message } from './types.ts'

export const MESSAGE_KEYS = [
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
  'text',
  'thread_id',
] as const

export function messageDto(m: Pick<Message, 'id' | 'channel_id' | 'author_id' | 'author_name' | 'text' | 'created_at'> & Partial<Message>): Message {
  return {
    author_type: 'AGENT',
    edited_at: null,
    in_reply_to_event: null,
    chain_depth: 1,
    thread_id: null,
    reply_count: 0,
    last_reply_at: null,
    recent_replier_ids: [],
    deleted: false,
    mentions: [],
    reactions: [],
    ...m,
  }
}
