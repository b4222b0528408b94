// The bodies and queries of the message routes, and the pages and search hits they answer. The
// message object itself is src/schemas/message.ts.
import { Type, type Static } from 'typebox'
import { Uuid } from '../../schemas/common.ts'
import { MessageRef, MessageSchema } from '../../schemas/message.ts'
import { ApprovalRequestSchema } from '../approvals/schemas.ts'

/** What a post's `thread_id` is: every way of posting takes it (REST, multipart, WebSocket, integrations, MCP). */
export const ThreadIdField = Type.String({
  format: 'uuid',
  description: 'Optional: reply in the thread of this root message of the same channel. A reply to a reply is 400 `THREAD_NOT_ROOT`; an id that is not a message of this channel is 404 `NOT_FOUND`.',
})

/** What a post reacts to: every way of posting takes it (REST, multipart, WebSocket, integrations, MCP). */
export const InReplyToEventField = Type.String({
  format: 'uuid',
  description:
    "Optional: the id of the event this message reacts to, e.g. `event_id` of the webhook delivery (or `X-Service-Event-Id` of an integration delivery, `event_id` of a WebSocket frame). For `message.created` that is the message's id. An agent's message then gets `chain_depth` one more than that message's, and a chain deeper than the workspace's `loop_guard_max_depth` is refused with 429 `LOOP_DETECTED`. An id the service does not know starts a new chain. docs/loops.md.",
})

/** The 429 of routes that post messages: the loop guard, or the workspace rate limit. */
export const LoopOrRateLimited = {
  description:
    "`LOOP_DETECTED`: the loop guard refused an agent's post (docs/loops.md); or `RATE_LIMITED`: the workspace rate limit (only when one is configured). `Retry-After` gives the seconds to wait.",
  headers: { 'Retry-After': { type: 'integer', description: 'Seconds until a post can be admitted again.' } },
  content: { 'application/json': { schema: { $ref: 'Error#' } } },
}

/** Mentions without parsing: every way of posting takes it (REST, multipart, WebSocket, integrations). */
export const MAX_EXPLICIT_MENTIONS = 100
export const MentionsField = Type.Array(Uuid, {
  maxItems: MAX_EXPLICIT_MENTIONS,
  description:
    'Optional: ids of channel members (users or agents) to mention, besides the `@name` tokens of the text (at most 100). Repeats are dropped; ids that are not members of the channel are ignored silently, whether or not they exist.',
})

export const PostMessageBody = Type.Object(
  {
    text: Type.String({
      description: 'Message text: at least one non-space character, at most MAX_MESSAGE_LENGTH (default 40,000) characters. With `stream: true` it is the initial text and may be empty (`""`).',
    }),
    in_reply_to_event: Type.Optional(InReplyToEventField),
    mentions: Type.Optional(MentionsField),
    thread_id: Type.Optional(ThreadIdField),
    approval: Type.Optional(ApprovalRequestSchema),
    stream: Type.Optional(
      Type.Boolean({
        description:
          'Agents only: `true` starts a streaming message (`stream_state` `streaming`; `text` its initial text, which may be empty), appended to with `POST …/messages/{message_id}/stream` and ended with `…/stream/finish` or `…/stream/cancel` (docs/realtime.md, "Streaming messages"). Not with `mentions` (the final text\'s `@name` tokens are resolved when it finishes) nor `Idempotency-Key`.',
      }),
    ),
  },
  { additionalProperties: false },
)

/**
 * Multipart form. The parts are streamed to disk, not parsed into a body: the route sets the body
 * to `{}` before validation (src/modules/messages/routes.ts), so this schema describes the form
 * for generators (a binary `file`, not a string; not nullable) without holding the upload.
 */
export const PostMessageMultipart = Type.Object(
  {
    text: Type.Optional(Type.String({ description: 'Message text; optional when a file is sent, and may then be empty.' })),
    in_reply_to_event: Type.Optional(InReplyToEventField),
    mentions: Type.Optional(Type.String({ description: 'Optional: member ids to mention, comma-separated (the field may also repeat); same rules as `mentions` in JSON.' })),
    thread_id: Type.Optional(ThreadIdField),
    file: Type.Optional(
      Type.Unsafe<Blob>({
        type: 'string',
        format: 'binary',
        contentMediaType: 'application/octet-stream',
        description: 'One file, at most 10 MiB (10,485,760 bytes); its part carries the file name and media type.',
      }),
    ),
  },
  { description: 'Fields `text` and `file` (at least one of them), and optionally `in_reply_to_event`, `mentions` and `thread_id`.' },
)

export const EditMessageBody = Type.Object(
  {
    text: Type.String({ description: 'The new text (same rules as on posting; may be empty only if the message has a file).' }),
    mentions: Type.Optional({
      ...MentionsField,
      description:
        'Optional: replaces the ids mentioned explicitly when posting. Omitted: those still members stay mentioned. The `@name` tokens of the new text are resolved again either way; members mentioned for the first time are notified (`message.mentioned`).',
    }),
  },
  { additionalProperties: false },
)

export const ChannelMessageParams = Type.Object({ id: Uuid, message_id: Uuid }, { additionalProperties: false })

export const MESSAGE_PAGE_DEFAULT = 50
export const SEARCH_PAGE_DEFAULT = 20

export const ListMessagesQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: MESSAGE_PAGE_DEFAULT, description: 'Page size, 1 to 100 (default 50); above 100 is a 400.' })),
    before: Type.Optional(Type.String({ format: 'uuid', description: 'Only messages older than this message id (walk back).' })),
    after: Type.Optional(Type.String({ format: 'uuid', description: 'Only messages newer than this message id (walk forward): the oldest `limit` of them, still listed newest first.' })),
  },
  { additionalProperties: false },
)

/** The channel's list also chooses whether thread replies are in it. */
export const ListChannelMessagesQuery = Type.Object(
  {
    ...ListMessagesQuery.properties,
    threads: Type.Optional(
      Type.Union([Type.Literal('all'), Type.Literal('roots')], {
        default: 'all',
        description:
          '`all` (default): every message, thread replies included (each with its `thread_id`). `roots`: only messages that are not replies (roots and plain messages), as a channel view shows them.',
      }),
    ),
  },
  { additionalProperties: false },
)
export type ListChannelMessagesQueryInput = Static<typeof ListChannelMessagesQuery> & { limit: number }
// `limit` is optional to callers; the validator fills in the default, so the service always has it.
export type ListMessagesQueryInput = Static<typeof ListMessagesQuery> & { limit: number }

export const MessagePageSchema = Type.Object(
  {
    messages: Type.Array(MessageRef, { description: 'Newest first.' }),
    has_more: Type.Boolean({ description: 'More messages exist beyond this page in the direction of travel: older ones (no cursor, or `before`) or newer ones (`after`).' }),
    next_before: Type.Union([Uuid, Type.Null()], { description: 'Id of the oldest message on the page: pass as `before` for the next older page. Null when the page is empty.' }),
    next_after: Type.Union([Uuid, Type.Null()], { description: 'Id of the newest message on the page: pass as `after` for the next newer page. Null when the page is empty.' }),
  },
  { additionalProperties: false },
)
export type MessagePage = Static<typeof MessagePageSchema>

export const SearchQuery = Type.Object(
  {
    q: Type.String({ minLength: 1, maxLength: 500, description: 'Web-search syntax: words, "quoted phrases", OR, -excluded (English stemming).' }),
    channel_id: Type.Optional(Uuid),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: SEARCH_PAGE_DEFAULT, description: '1 to 100 (default 20); above 100 is a 400.' })),
  },
  { additionalProperties: false },
)
export type SearchQueryInput = Static<typeof SearchQuery> & { limit: number }

export const SearchHitSchema = Type.Object(
  {
    ...MessageSchema.properties,
    message: MessageRef,
    rank: Type.Number({ description: 'ts_rank of the match; results are ordered by it, best first (then newest first), among the newest 200 matches.' }),
    snippet: Type.String({ description: 'HTML-escaped extract of the text with the matched words wrapped in <mark>…</mark>.' }),
  },
  { additionalProperties: false, description: "The message's fields, then the same message under `message`, its rank and a snippet." },
)

export const SearchResultSchema = Type.Object({ results: Type.Array(SearchHitSchema, { description: 'Best match first, among the newest 200 matches.' }) }, { additionalProperties: false })
export type SearchResult = Static<typeof SearchResultSchema>

export const AttachmentParams = Type.Object({ id: Uuid }, { additionalProperties: false })
