// The message object of the API, as tests expect it: its keys (a message without a file, from the
// schema every response is also validated against), and a complete one built from the few fields
// a test cares about (the rest as a new plain message has them).
import { MessageSchema, toMessageDto } from '../../src/schemas/message.ts'
import type { Message } from './types.ts'

/** The keys of a message without a file (`attachment` is its only optional field), sorted. */
export const MESSAGE_KEYS: readonly string[] = [...MessageSchema.required].sort()

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
