// How a message is read: one column list and one row → record mapping for every read that answers
// the API's shape (a channel's history, its roots, a thread's replies, mentions, search, a single
// message, an edit's result, a stream's message). The repositories run these statements; toMessageDto
// (src/schemas/message.ts) turns the record into the API's object. docs/architecture.md, "Add a
// field to messages", lists what else a new field touches.
import { approvalRecordOfJson } from '../../schemas/approval.ts'
import type { MessageRecord } from '../../schemas/message.ts'

/** The message's approval request, if any (docs/approvals.md): one primary-key probe per row. */
const APPROVAL_COLUMN = '(SELECT to_jsonb(p) FROM approvals p WHERE p.message_id = m.id) AS approval'

/**
 * The columns of a message `m` and its attachment `a` (LEFT JOINed, see MESSAGE_JOIN). One row per
 * message and one statement per read: through Prisma a page was two queries and their mapping,
 * about half of the server's time for a page (docs/performance.md, "Search at a million messages").
 */
export const MESSAGE_COLUMNS = `m.id, m.channel_id, m.author_id, m.author_type, m.author_name, m.text, m.created_at, m.edited_at,
       m.in_reply_to_event, m.chain_depth, m.mentions::text[] AS mentions,
       m.thread_id, m.reply_count, m.last_reply_at, m.recent_replier_ids::text[] AS recent_replier_ids, m.deleted, m.stream_state,
       a.id AS att_id, a.file_name AS att_file_name, a.content_type AS att_content_type, a.size AS att_size, a.storage_name AS att_storage_name,
       ${APPROVAL_COLUMN}`

/** The attachment of `m`, for MESSAGE_COLUMNS. */
export const MESSAGE_JOIN = 'LEFT JOIN attachments a ON a.message_id = m.id'

/** The messages `where` selects, as MessageRows; `from` names the rows `m` (a table or a CTE). */
export function selectMessages(where: string, from = 'messages m'): string {
  return `SELECT ${MESSAGE_COLUMNS} FROM ${from} ${MESSAGE_JOIN} WHERE ${where}`
}

/** A message of a channel ($1 the message, $2 the channel): the message routes' and the streams' single read. */
export const MESSAGE_IN_CHANNEL = { name: 'message-in-channel', text: selectMessages('m.id = $1::uuid AND m.channel_id = $2::uuid') }

/** A message by id ($1), read inside a transaction that just wrote it. */
export const MESSAGE_BY_ID = selectMessages('m.id = $1::uuid')

/** A row of MESSAGE_COLUMNS, as pg (and Prisma's raw queries) answer it. */
export interface MessageRow {
  id: string
  channel_id: string
  author_id: string
  author_type: 'AGENT' | 'HUMAN'
  author_name: string
  text: string
  created_at: Date
  edited_at: Date | null
  in_reply_to_event: string | null
  chain_depth: number
  mentions: string[]
  thread_id: string | null
  reply_count: number
  last_reply_at: Date | null
  recent_replier_ids: string[]
  deleted: boolean
  stream_state: string
  att_id: string | null
  att_file_name: string | null
  att_content_type: string | null
  att_size: number | null
  att_storage_name: string | null
  approval: Record<string, unknown> | null
}

/** A message as read: every field of the record but the caller's reactions (added by the service). */
export type StoredMessage = Required<Omit<MessageRecord, 'reactions'>>

export function messageRecord(r: MessageRow): StoredMessage {
  return {
    id: r.id,
    channelId: r.channel_id,
    authorId: r.author_id,
    authorType: r.author_type,
    authorName: r.author_name,
    text: r.text,
    createdAt: r.created_at,
    editedAt: r.edited_at,
    inReplyToEvent: r.in_reply_to_event,
    chainDepth: r.chain_depth,
    mentions: r.mentions,
    threadId: r.thread_id,
    replyCount: r.reply_count,
    lastReplyAt: r.last_reply_at,
    recentReplierIds: r.recent_replier_ids,
    deleted: r.deleted,
    streamState: r.stream_state,
    attachment: r.att_id ? { id: r.att_id, fileName: r.att_file_name!, contentType: r.att_content_type!, size: r.att_size!, storageName: r.att_storage_name! } : null,
    approval: r.approval ? approvalRecordOfJson(r.approval) : null,
  }
}
