// The message object: REST, the WebSocket's `new_message`, the domain events, webhooks and MCP all
// carry this one shape. It sits below the modules and the event catalog (src/events/catalog.ts),
// which both use it. The fields a message gained after launch carry a `default`: the value a
// message that predates them has (a replayed Idempotency-Key response is filled in from them).
// What a row read from the database is (MessageRecord) and its DTO are here too; the columns and
// the row's mapping are src/modules/messages/read-model.ts.
import { Type, type Static } from 'typebox'
import { ApprovalSchema, toApprovalDto, type ApprovalRecord } from './approval.ts'
import { Timestamp, Uuid } from './common.ts'

export const AuthorType = Type.Union([Type.Literal('AGENT'), Type.Literal('HUMAN')], { description: '`AGENT` or `HUMAN`.' })

export const AttachmentSchema = Type.Object(
  {
    id: Uuid,
    file_name: Type.String({ description: "The uploader's file name, without any directory part." }),
    content_type: Type.String({ description: 'Media type the uploader declared (informative; downloads are served as application/octet-stream).' }),
    size: Type.Integer({ minimum: 0, description: 'Bytes.' }),
    download_url: Type.String({ description: 'Absolute URL of `GET /api/v1/attachments/{id}` (members of the channel only, with credentials).' }),
  },
  { additionalProperties: false },
)

// ---- threads (docs/decisions.md, "Threads") ----
/** Every message carries its thread, and a root the summary of its replies (kept on its row). */
export const ThreadFields = {
  thread_id: Type.Union([Uuid, Type.Null()], {
    default: null,
    description: 'The root message this one replies to (threads are one level deep); null for a root or a plain message.',
  }),
  reply_count: Type.Integer({ minimum: 0, default: 0, description: 'How many replies the thread of this root has; 0 for a reply or a message without replies.' }),
  last_reply_at: Type.Union([Timestamp, Type.Null()], { default: null, description: 'When the newest reply was posted; null when there is none (always null for a reply).' }),
  recent_replier_ids: Type.Array(Uuid, {
    maxItems: 3,
    default: [],
    description: 'Up to 3 distinct authors of the newest replies, newest first; empty when there is none (always empty for a reply).',
  }),
  deleted: Type.Boolean({
    default: false,
    description: 'True for a deleted root kept as a placeholder while its replies remain (its text is empty and it has no file); false otherwise.',
  }),
}

export interface ThreadRecord {
  threadId?: string | null
  replyCount?: number
  lastReplyAt?: Date | null
  recentReplierIds?: string[]
  deleted?: boolean
}

function threadFieldsOf(m: ThreadRecord) {
  return {
    thread_id: m.threadId ?? null,
    reply_count: m.replyCount ?? 0,
    last_reply_at: m.lastReplyAt ? m.lastReplyAt.toISOString() : null,
    recent_replier_ids: m.recentReplierIds ?? [],
    deleted: m.deleted ?? false,
  }
}
// ---- end threads ----
// ---- reactions (docs/decisions.md, "Reactions") ----
export const ReactionSummarySchema = Type.Object(
  {
    emoji: Type.String({ description: 'A single emoji (e.g. `👀`) or a `:shortcode:`.' }),
    count: Type.Integer({ minimum: 1, description: 'How many members reacted with it.' }),
    reacted: Type.Boolean({ description: 'Whether the caller is one of them. Always false in events (an event goes to many recipients): reaction events carry `member_id`.' }),
  },
  { additionalProperties: false },
)
export type ReactionSummary = Static<typeof ReactionSummarySchema>
const ReactionsField = Type.Array(ReactionSummarySchema, { default: [], description: 'Reactions, in the order their first one was added; empty when none.' })

// ---- streaming messages (docs/decisions.md, "Streaming messages (issue 25)") ----
export const STREAM_STATES = ['streaming', 'complete', 'cancelled', 'interrupted'] as const
export type StreamState = (typeof STREAM_STATES)[number]
const StreamStateField = Type.Union([Type.Literal('streaming'), Type.Literal('complete'), Type.Literal('cancelled'), Type.Literal('interrupted')], {
  default: 'complete',
  description:
    '`complete` for every message posted whole and for a stream its agent finished; `streaming` while an agent appends to it (the text so far); `cancelled` when its agent cancelled it, `interrupted` when it stopped without an end (idle, Stop unanswered, instance gone), each with the text written until then.',
})
// ---- end streaming messages ----

export const MessageSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid', description: 'UUIDv7; ids sort in posting order and serve as pagination cursors.' }),
    channel_id: Uuid,
    author_id: Type.String({ format: 'uuid', description: 'Id of the author user or agent.' }),
    author_name: Type.String({ description: "The author's display name when the message was posted." }),
    author_type: AuthorType,
    text: Type.String(),
    created_at: Timestamp,
    edited_at: Type.Union([Timestamp, Type.Null()], { description: 'When the text was last edited; null if never.' }),
    in_reply_to_event: Type.Union([Uuid, Type.Null()], {
      description: 'The event the poster said it was reacting to (`in_reply_to_event` when posting), as given; null if none. docs/loops.md.',
    }),
    chain_depth: Type.Integer({
      minimum: 0,
      description:
        "The message's place in a chain of agent messages: 0 for a human's message; for an agent's, one more than the message its `in_reply_to_event` is about (1 when it names none, or an event that is not about a message). The loop guard caps it (`loop_guard_max_depth`).",
    }),
    // Mentions (docs/decisions.md, "Mentions").
    mentions: Type.Array(Uuid, {
      default: [],
      description:
        "Ids of the channel members (users or agents) the message mentions, in order, without repeats: the `@name` tokens of its text that name a member (an agent's `name`; a human's handle, the display name in lower case with hyphens for spaces), then the ids given in `mentions` when posting that are members. Resolved again when the text is edited. Non-members are never listed.",
    }),
    attachment: Type.Optional(AttachmentSchema),
    ...ThreadFields,
    reactions: ReactionsField,
    approval: Type.Union([ApprovalSchema, Type.Null()], {
      default: null,
      description: "The agent's approval request this message carries, with its state (docs/approvals.md); null for any other message.",
    }),
    stream_state: StreamStateField,
  },
  { title: 'Message', additionalProperties: false },
)

export type MessageDto = Static<typeof MessageSchema>

export const MessageRef = Type.Unsafe<MessageDto>(Type.Ref('Message'))

/**
 * A message as it is read (src/modules/messages/read-model.ts) or built when posted, with its
 * attachment if any: what toMessageDto turns into the API's shape.
 */
export interface MessageRecord extends ThreadRecord {
  id: string
  channelId: string
  authorId: string
  authorType: 'AGENT' | 'HUMAN'
  authorName: string
  text: string
  createdAt: Date
  editedAt: Date | null
  inReplyToEvent: string | null
  chainDepth: number
  /** Mentioned member ids (absent: none). */
  mentions?: string[]
  attachment?: AttachmentRecord | null
  /** Summaries as the caller sees them; none when not loaded (a new message). */
  reactions?: ReactionSummary[]
  /** The approval request it carries (absent: none). */
  approval?: ApprovalRecord | null
  /** Absent: complete (a message posted whole). */
  streamState?: string
}

export interface AttachmentRecord {
  id: string
  fileName: string
  contentType: string
  size: number
  /** The file's name under the upload folder (never shown: deleting the message removes the file). */
  storageName: string
}

export function attachmentUrl(publicUrl: string, attachmentId: string): string {
  return `${publicUrl}/api/v1/attachments/${attachmentId}`
}

export function toMessageDto(m: MessageRecord, publicUrl: string): MessageDto {
  const dto: MessageDto = {
    id: m.id,
    channel_id: m.channelId,
    author_id: m.authorId,
    author_name: m.authorName,
    author_type: m.authorType,
    text: m.text,
    created_at: m.createdAt.toISOString(),
    edited_at: m.editedAt ? m.editedAt.toISOString() : null,
    in_reply_to_event: m.inReplyToEvent,
    chain_depth: m.chainDepth,
    mentions: m.mentions ?? [],
    ...threadFieldsOf(m),
    reactions: m.reactions ?? [],
    approval: m.approval ? toApprovalDto(m.approval) : null,
    stream_state: (m.streamState ?? 'complete') as StreamState,
  }
  if (m.attachment) {
    dto.attachment = {
      id: m.attachment.id,
      file_name: m.attachment.fileName,
      content_type: m.attachment.contentType,
      size: m.attachment.size,
      download_url: attachmentUrl(publicUrl, m.attachment.id),
    }
  }
  return dto
}
