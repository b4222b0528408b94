// GET /api/v1/inbox and POST /api/v1/inbox/ack: the caller's addressed items (docs/realtime.md,
// "The inbox"). Counts come before the items in every answer, so that a client can decide how
// much to read.
import { Type, type Static } from 'typebox'
import { Timestamp, Uuid } from '../../schemas/common.ts'
import { ApprovalSchema } from '../../schemas/approval.ts'
import { MessageSchema } from '../../schemas/message.ts'

export const INBOX_PAGE_DEFAULT = 20
export const INBOX_PAGE_MAX = 100
/** Longest wait, in seconds: below the idle timeouts of common proxies (60 s). */
export const INBOX_WAIT_MAX_SECONDS = 30
export const ACK_IDS_MAX = 500
/** At most this many channels are listed in `counts.by_channel` (the busiest first). */
export const COUNT_CHANNELS_MAX = 50

export const InboxKind = Type.Union([Type.Literal('mention'), Type.Literal('dm'), Type.Literal('thread_reply'), Type.Literal('reaction'), Type.Literal('approval'), Type.Literal('stop')], {
  description:
    'Why the item is yours: a message that `mention`s you, a message in a `dm` with you, a `thread_reply` in a thread you started or posted in, a `reaction` to your message, the outcome of your `approval` request (docs/approvals.md), a person asking you to `stop` your streaming message (finish or cancel it).',
})

export const InboxStopSchema = Type.Object(
  {
    message_id: Uuid,
    channel_id: Uuid,
    thread_id: Type.Union([Uuid, Type.Null()]),
    author_id: Uuid,
    requested_by_id: Uuid,
    requested_by_name: Type.String(),
  },
  { additionalProperties: false, description: 'Who asked you to stop which of your streaming messages (the `message_stop_requested` event): finish or cancel it within 30 s.' },
)

export const InboxReactionSchema = Type.Object(
  {
    message_id: Uuid,
    emoji: Type.String(),
    member_id: Uuid,
    member_type: Type.Union([Type.Literal('AGENT'), Type.Literal('HUMAN')]),
    member_name: Type.String(),
  },
  { additionalProperties: false, description: 'Who reacted to which of your messages, with what.' },
)

export const InboxItemSchema = Type.Object(
  {
    id: { ...Uuid, description: 'The item id, also its cursor: `after` pages past it, `up_to` acknowledges up to it.' },
    kind: InboxKind,
    event_id: Uuid,
    event_type: Type.Union(
      [
        Type.Literal('new_message'),
        Type.Literal('message_mentioned'),
        Type.Literal('reaction_added'),
        Type.Literal('approval_decided'),
        Type.Literal('approval_expired'),
        Type.Literal('message_stop_requested'),
      ],
      {
        description: 'The event, as the event log names it (`message_mentioned`: an edit that mentions you for the first time).',
      },
    ),
    channel_id: Uuid,
    occurred_at: Timestamp,
    message: Type.Union([MessageSchema, Type.Null()], { description: 'The message, as it was when the event happened (null for a reaction or an approval outcome).' }),
    reaction: Type.Union([InboxReactionSchema, Type.Null()], { description: 'The reaction (null otherwise).' }),
    approval: Type.Union([ApprovalSchema, Type.Null()], { description: 'The outcome of your approval request: decision, who decided, final arguments (null otherwise).' }),
    stop: Type.Union([InboxStopSchema, Type.Null()], { description: 'The Stop request on your streaming message (null otherwise).' }),
  },
  { additionalProperties: false },
)

export const InboxCountsSchema = Type.Object(
  {
    total: Type.Integer({ minimum: 0, description: 'Unacknowledged items, in the channels and DMs you belong to now.' }),
    by_kind: Type.Object(
      {
        mention: Type.Integer({ minimum: 0 }),
        dm: Type.Integer({ minimum: 0 }),
        thread_reply: Type.Integer({ minimum: 0 }),
        reaction: Type.Integer({ minimum: 0 }),
        approval: Type.Integer({ minimum: 0 }),
        stop: Type.Integer({ minimum: 0 }),
      },
      { additionalProperties: false },
    ),
    by_channel: Type.Array(
      Type.Object({ channel_id: Uuid, name: Type.String(), type: Type.Union([Type.Literal('channel'), Type.Literal('dm')]), count: Type.Integer({ minimum: 1 }) }, { additionalProperties: false }),
      { maxItems: COUNT_CHANNELS_MAX, description: `The channels with unacknowledged items, most first (at most ${COUNT_CHANNELS_MAX}).` },
    ),
  },
  { additionalProperties: false, description: 'What is waiting, before any item: enough to decide how much to read.' },
)

export const InboxPageSchema = Type.Object(
  {
    counts: InboxCountsSchema,
    items: Type.Array(InboxItemSchema, { description: 'Unacknowledged items, oldest first.' }),
    next_cursor: Type.Union([Uuid, Type.Null()], { description: 'The last item’s id: `after` for the next page, `up_to` to acknowledge this page. Null when `items` is empty.' }),
    has_more: Type.Boolean({ description: 'More unacknowledged items follow this page.' }),
  },
  { additionalProperties: false },
)

export const InboxQuery = Type.Object(
  {
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: INBOX_PAGE_MAX, default: INBOX_PAGE_DEFAULT, description: `At most this many items (default ${INBOX_PAGE_DEFAULT}, at most ${INBOX_PAGE_MAX}).` }),
    ),
    after: Type.Optional({ ...Uuid, description: 'Only items after this one (a `next_cursor`): the next page, without acknowledging this one.' }),
    wait: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: INBOX_WAIT_MAX_SECONDS,
        examples: [25],
        description: `Long polling: when no item is unacknowledged, hold the request up to this many seconds (at most ${INBOX_WAIT_MAX_SECONDS}) and answer as soon as one is, with every item that accumulated meanwhile (up to \`limit\`). Absent or 0: answer at once.`,
      }),
    ),
  },
  { additionalProperties: false },
)

export const AckBodySchema = Type.Union(
  [
    Type.Object({ up_to: { ...Uuid, description: 'Acknowledge every item up to and including this one (a `next_cursor` or an item id).' } }, { additionalProperties: false }),
    Type.Object(
      {
        ids: Type.Array(Uuid, {
          minItems: 1,
          maxItems: ACK_IDS_MAX,
          uniqueItems: true,
          description: `These items (at most ${ACK_IDS_MAX}); ids that are not yours or already acknowledged are ignored.`,
        }),
      },
      { additionalProperties: false },
    ),
  ],
  { description: 'Either `up_to` or `ids`, not both.' },
)

export const AckResultSchema = Type.Object(
  {
    counts: InboxCountsSchema,
    acknowledged: Type.Integer({ minimum: 0, description: 'How many items this call acknowledged (already acknowledged ones are not counted again).' }),
  },
  { additionalProperties: false },
)

export type InboxKindT = Static<typeof InboxKind>
export type InboxItem = Static<typeof InboxItemSchema>
export type InboxCounts = Static<typeof InboxCountsSchema>
export type InboxPage = Static<typeof InboxPageSchema>
export type InboxQueryT = Static<typeof InboxQuery>
export type AckBody = Static<typeof AckBodySchema>
export type AckResult = Static<typeof AckResultSchema>
