// The frames of the real-time protocol (docs/realtime.md, openapi/asyncapi.yaml). Event frames
// are also the items of the REST event log (GET /api/v1/events), so a client handles both with
// the same code. Every event frame has the same envelope: type, event_id (de-duplication),
// cursor (resume position), occurred_at, channel_id.
import { Type, type Static, type TSchema } from 'typebox'
import type { DomainEvent, DomainEventType } from '../events/types.ts'
import { InReplyToEventField, MessageSchema } from '../modules/messages/schemas.ts'
import { Timestamp, Uuid } from '../schemas/common.ts'
import type { LogEntry } from './broker.ts'
import { CURSOR_PATTERN, SINCE_PATTERN } from './cursor.ts'

export const CursorSchema = Type.String({
  pattern: CURSOR_PATTERN,
  description: 'Position in the event log ("<milliseconds>-<sequence>"); larger is later. Opaque to clients: store it, send it back as `since`.',
  examples: ['1764000000000-0'],
})

/** `since` as clients send it (WebSocket upgrade, GET /api/v1/events); `description` is set where used. */
export const SinceSchema = Type.String({
  pattern: SINCE_PATTERN,
  examples: ['1764000000000-0', '0'],
})

/** How both places describe the bare-integer form of `since`. */
export const SINCE_INTEGER_NOTE = 'A bare integer N is read as the cursor `N-0`: `0` asks for the whole log (resync_required when the log no longer reaches back that far).'

const ActorType = Type.Union([Type.Literal('AGENT'), Type.Literal('HUMAN')])

const ChannelSummary = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    description: Type.String(),
    topic: Type.Union([Type.String(), Type.Null()]),
    type: Type.Union([Type.Literal('channel'), Type.Literal('dm')]),
    created_at: Timestamp,
  },
  { additionalProperties: false },
)

function eventFrame<T extends string, P extends Record<string, TSchema>>(type: T, description: string, props: P) {
  return Type.Object(
    {
      type: Type.Literal(type),
      event_id: Type.String({ format: 'uuid', description: 'Unique per event; a client that sees an id twice drops the repeat.' }),
      cursor: CursorSchema,
      occurred_at: Timestamp,
      channel_id: Uuid,
      ...props,
    },
    { additionalProperties: false, description, title: type },
  )
}

export const NewMessageFrame = eventFrame('new_message', 'A message was posted (REST, WebSocket or an integration).', { message: MessageSchema })
export const MessageUpdatedFrame = eventFrame('message_updated', 'A message was edited; `message` is the edited message.', { message: MessageSchema })
export const MessageDeletedFrame = eventFrame('message_deleted', 'A message was deleted.', { message_id: Uuid })
export const MemberJoinedFrame = eventFrame('member_joined', 'A user or agent was added to the channel (also the creator of a new channel and both participants of a new DM).', {
  member_id: Uuid,
  member_type: ActorType,
  member_name: Type.String(),
})
export const MemberLeftFrame = eventFrame('member_left', 'A member was removed from the channel. The removed member receives this frame too, then nothing more from the channel.', {
  member_id: Uuid,
  member_type: ActorType,
})
export const ChannelCreatedFrame = eventFrame('channel_created', 'A channel or DM was created (sent to its members).', {
  channel: ChannelSummary,
  creator_id: Uuid,
  creator_type: ActorType,
})
export const ChannelUpdatedFrame = eventFrame('channel_updated', 'A channel was renamed or its description or topic changed.', { channel: ChannelSummary })
export const ChannelDeletedFrame = eventFrame('channel_deleted', 'A channel was deleted with its messages (sent to everyone who was a member).', {})

export const EventFrameSchema = Type.Union(
  [NewMessageFrame, MessageUpdatedFrame, MessageDeletedFrame, MemberJoinedFrame, MemberLeftFrame, ChannelCreatedFrame, ChannelUpdatedFrame, ChannelDeletedFrame],
  { title: 'EventFrame', description: 'One event of the log, as pushed on the WebSocket and listed by GET /api/v1/events.' },
)

export type EventFrame = Static<typeof EventFrameSchema>

/** Frame type of each domain event delivered to clients; agent.connected is for integrations only. */
export const FRAME_TYPES: Partial<Record<DomainEventType, EventFrame['type']>> = {
  'message.created': 'new_message',
  'message.updated': 'message_updated',
  'message.deleted': 'message_deleted',
  'member.joined': 'member_joined',
  'member.left': 'member_left',
  'channel.created': 'channel_created',
  'channel.updated': 'channel_updated',
  'channel.deleted': 'channel_deleted',
}

const FIELDS: Record<EventFrame['type'], string[]> = {
  new_message: ['message'],
  message_updated: ['message'],
  message_deleted: ['message_id'],
  member_joined: ['member_id', 'member_type', 'member_name'],
  member_left: ['member_id', 'member_type'],
  channel_created: ['channel', 'creator_id', 'creator_type'],
  channel_updated: ['channel'],
  channel_deleted: [],
}

/** Whether clients receive this event at all (a channel-scoped event of a delivered type). */
export function isClientEvent(event: DomainEvent): boolean {
  return event.channelId !== null && FRAME_TYPES[event.type] !== undefined
}

/** The client frame of a log entry, or null for events clients do not receive. */
export function toEventFrame(entry: LogEntry): EventFrame | null {
  const { event, cursor } = entry
  const type = FRAME_TYPES[event.type]
  if (!type || !event.channelId) return null
  const frame: Record<string, unknown> = { type, event_id: event.id, cursor, occurred_at: event.occurredAt, channel_id: event.channelId }
  for (const field of FIELDS[type]!) frame[field] = event.payload[field]
  return frame as EventFrame
}

// ---- control frames (server → client) ----

export const ReadyFrame = Type.Object(
  {
    type: Type.Literal('ready'),
    cursor: CursorSchema,
    replayed: Type.Integer({ minimum: 0, description: 'How many missed events were sent before this frame (0 without `since`).' }),
    principal: Type.Object({ id: Uuid, type: ActorType, name: Type.String() }, { additionalProperties: false }),
  },
  {
    additionalProperties: false,
    title: 'ready',
    description: 'Sent once per connection after the replay: live events follow. `cursor` is the position the client is at now.',
  },
)

export const ResyncRequiredFrame = Type.Object(
  {
    type: Type.Literal('resync_required'),
    cursor: CursorSchema,
    error: Type.String(),
  },
  {
    additionalProperties: false,
    title: 'resync_required',
    description:
      'The `since` cursor is older than the retained history (or unknown to this log), so events may have been missed. Reload the state you keep over REST; live events continue after `cursor`.',
  },
)

const EchoedId = (what: string) =>
  Type.Union([Type.String(), Type.Null()], { description: `The \`id\` (or, without one, the \`client_id\`) of the client frame${what}.` })

/** Present exactly when the client frame carried a readable `client_id`. */
const EchoedClientId = Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'The `client_id` of the client frame, when it had one.' }))

export const AckFrame = Type.Object(
  {
    type: Type.Literal('ack'),
    id: EchoedId(', null if it had neither'),
    client_id: EchoedClientId,
    message: MessageSchema,
  },
  { additionalProperties: false, title: 'ack', description: 'Answer to `send_message`: the stored message, exactly as REST returns it.' },
)

export const ErrorFrame = Type.Object(
  {
    type: Type.Literal('error'),
    id: EchoedId(' that failed, null if it had neither or the frame could not be read'),
    client_id: EchoedClientId,
    code: Type.String({ description: 'The same codes as the REST API (docs/errors.md).' }),
    error: Type.String(),
    retry_after: Type.Optional(
      Type.Integer({ minimum: 1, description: 'Seconds to wait before trying again, where REST would send `Retry-After` (e.g. `LOOP_DETECTED`).' }),
    ),
  },
  { additionalProperties: false, title: 'error', description: 'A client frame was refused. The connection stays open.' },
)

export const PongFrame = Type.Object(
  { type: Type.Literal('pong'), id: EchoedId(', null if it had neither'), client_id: EchoedClientId },
  { additionalProperties: false, title: 'pong', description: 'Answer to an application-level `ping`.' },
)

// ---- client → server ----

// Client frames ignore properties they do not define (additionalProperties is left open), so a
// client may attach its own bookkeeping and newer clients keep working against this server.
const ClientId = Type.String({ minLength: 1, maxLength: 128, description: 'Chosen by the client; echoed in the `ack`, `error` or `pong`.' })
const ClientIds = {
  id: Type.Optional(ClientId),
  client_id: Type.Optional({ ...ClientId, description: 'Alias of `id`, same rules; echoed as `client_id` (and as `id` when the frame has no `id`).' }),
}
const IGNORED = ' Properties not listed here are ignored.'

export const SendMessageFrame = Type.Object(
  {
    type: Type.Literal('send_message'),
    ...ClientIds,
    channel_id: Uuid,
    text: Type.String(),
    in_reply_to_event: Type.Optional(InReplyToEventField),
  },
  {
    additionalProperties: true,
    title: 'send_message',
    description: `Posts a message, exactly like POST /api/v1/channels/{id}/messages with JSON \`{text, in_reply_to_event}\` (loop protection included: docs/loops.md).${IGNORED}`,
  },
)

export const PingFrame = Type.Object(
  { type: Type.Literal('ping'), ...ClientIds },
  { additionalProperties: true, title: 'ping', description: `Application-level keep-alive for clients that cannot see protocol pings (browsers).${IGNORED}` },
)

export type SendMessage = Static<typeof SendMessageFrame>

/** Every frame the server sends, for validation in tests and the AsyncAPI document. */
export const SERVER_FRAMES = {
  new_message: NewMessageFrame,
  message_updated: MessageUpdatedFrame,
  message_deleted: MessageDeletedFrame,
  member_joined: MemberJoinedFrame,
  member_left: MemberLeftFrame,
  channel_created: ChannelCreatedFrame,
  channel_updated: ChannelUpdatedFrame,
  channel_deleted: ChannelDeletedFrame,
  ready: ReadyFrame,
  resync_required: ResyncRequiredFrame,
  ack: AckFrame,
  error: ErrorFrame,
  pong: PongFrame,
} as const

export const CLIENT_FRAMES = { send_message: SendMessageFrame, ping: PingFrame } as const
