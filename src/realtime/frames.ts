// The frames of the real-time protocol (docs/realtime.md, openapi/asyncapi.yaml). Event frames
// are derived from the event catalog (src/events/catalog.ts) and are also the items of the REST
// event log (GET /api/v1/events), so a client handles both with the same code. Every event frame
// has the same envelope: type, event_id (de-duplication), cursor (resume position), occurred_at,
// channel_id.
import { Type, type Static, type TObject, type TSchema } from 'typebox'
import { EVENTS } from '../events/catalog.ts'
import { frameTypeOf, type EventCatalog, type EventSpec, type FrameDoc, type FrameTypeOf } from '../events/define.ts'
import { CLIENT_EVENTS, typesWith, type ClientEventType, type DomainEvent, type EventPayload } from '../events/types.ts'
import { InReplyToEventField, MentionsField, ThreadIdField } from '../modules/messages/schemas.ts'
import { MessageSchema } from '../schemas/message.ts'
import { Timestamp, Uuid } from '../schemas/common.ts'
import type { LogEntry } from './broker.ts'
import { CURSOR_PATTERN, SINCE_PATTERN, type Cursor } from './cursor.ts'
import { AgentStatusFrame, MessageDeltaFrame, MessageStatusFrame, PresenceFrame, ThreadStatusFrame, TypingClientFrame, TypingFrame, UserUpdatedFrame } from './signals.ts'

export const CursorSchema = Type.String({
  pattern: CURSOR_PATTERN,
  description: 'Position in the event log ("<milliseconds>-<sequence>"); larger is later. Opaque to clients: store it, send it back as `since`.',
  examples: ['1764000000000-0'],
})

/** `since` as clients send it (WebSocket upgrade, GET /api/v1/events); `description` is set where used. */
export const SinceSchema = Type.String({
  pattern: SINCE_PATTERN,
  examples: ['1764000000000-0', '0', 'now'],
})

/** How both places describe the bare-integer form of `since`. */
export const SINCE_INTEGER_NOTE =
  'A bare integer N is read as the cursor `N-0`: `0` asks for the whole log (resync_required when the log no longer reaches back that far). `now`: start at the newest event when the request is read, i.e. skip the history and get only what happens next.'

const ActorType = Type.Union([Type.Literal('AGENT'), Type.Literal('HUMAN')])

// ---- event frames: derived from the event catalog (src/events/catalog.ts) ----

/** Payload fields a frame does not repeat: the envelope's `channel_id` carries the same id. */
const ENVELOPE_FIELDS = new Set(['channel_id'])

/** The payload fields an event's frame carries, in the schema's order. */
export function frameFields(spec: EventSpec): string[] {
  return Object.keys(spec.payload.properties).filter((field) => !ENVELOPE_FIELDS.has(field))
}

/**
 * The frame of one event: the envelope every event frame shares (type, event_id for
 * de-duplication, cursor to resume, occurred_at, channel_id), then the event's payload fields.
 */
export function eventFrameSchema(type: string, spec: EventSpec & { frame: FrameDoc }): TObject {
  const frameType = frameTypeOf(type)
  const fields = Object.fromEntries(frameFields(spec).map((field) => [field, spec.payload.properties[field]!]))
  return Type.Object(
    {
      type: Type.Literal(frameType),
      event_id: Type.String({ format: 'uuid', description: 'Unique per event; a client that sees an id twice drops the repeat.' }),
      cursor: CursorSchema,
      occurred_at: Timestamp,
      channel_id: Uuid,
      ...fields,
    },
    { additionalProperties: false, description: spec.frame.description, title: frameType },
  )
}

/** Every event frame of a catalog, by frame type, in catalog order. */
export function eventFrameSchemas(catalog: EventCatalog): Record<string, TObject> {
  const frames: Record<string, TObject> = {}
  for (const type of typesWith(catalog, 'frame')) frames[frameTypeOf(type)] = eventFrameSchema(type, catalog[type] as EventSpec & { frame: FrameDoc })
  return frames
}

type EventFrameOf<T extends ClientEventType> = {
  type: FrameTypeOf<T>
  event_id: string
  cursor: Cursor
  occurred_at: string
  channel_id: string
} & Omit<EventPayload<T>, 'channel_id'>

/** An event frame of the service's catalog (the union over its client events). */
export type EventFrame = { [T in ClientEventType]: EventFrameOf<T> }[ClientEventType]

export const EVENT_FRAMES = eventFrameSchemas(EVENTS)

export const EventFrameSchema = Type.Unsafe<EventFrame>(
  Type.Union(Object.values(EVENT_FRAMES), { title: 'EventFrame', description: 'One event of the log, as pushed on the WebSocket and listed by GET /api/v1/events.' }),
)

const FIELDS = new Map(CLIENT_EVENTS.map((type) => [type, frameFields(EVENTS[type])]))

/** Whether clients receive this event at all (a channel-scoped event of a delivered type). */
export function isClientEvent(event: DomainEvent): boolean {
  return event.channelId !== null && FIELDS.has(event.type)
}

/** The client frame of a log entry, or null for events clients do not receive. */
export function toEventFrame(entry: LogEntry): EventFrame | null {
  const { event, cursor } = entry
  const fields = FIELDS.get(event.type as ClientEventType)
  if (!fields || !event.channelId) return null
  const frame: Record<string, unknown> = { type: frameTypeOf(event.type), event_id: event.id, cursor, occurred_at: event.occurredAt, channel_id: event.channelId }
  const payload = event.payload as Record<string, unknown>
  for (const field of fields) frame[field] = payload[field]
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

const EchoedId = (what: string) => Type.Union([Type.String(), Type.Null()], { description: `The \`id\` (or, without one, the \`client_id\`) of the client frame${what}.` })

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
    retry_after: Type.Optional(Type.Integer({ minimum: 1, description: 'Seconds to wait before trying again, where REST would send `Retry-After` (e.g. `LOOP_DETECTED`).' })),
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
    mentions: Type.Optional(MentionsField),
    thread_id: Type.Optional(ThreadIdField),
  },
  {
    additionalProperties: true,
    title: 'send_message',
    description: `Posts a message, exactly like POST /api/v1/channels/{id}/messages with JSON \`{text, in_reply_to_event, mentions}\` (loop protection included: docs/loops.md).${IGNORED}`,
  },
)

// ---- streaming messages (issue 25): the REST stream routes as frames, answered in order ----
const StreamText = Type.String({ minLength: 1, description: 'Text to add at the end (at most 16 KiB in UTF-8).' })

export const StreamStartFrame = Type.Object(
  {
    type: Type.Literal('stream_start'),
    ...ClientIds,
    channel_id: Uuid,
    text: Type.Optional(Type.String({ description: 'The initial text (may be empty; default empty).' })),
    thread_id: Type.Optional(ThreadIdField),
    in_reply_to_event: Type.Optional(InReplyToEventField),
  },
  {
    additionalProperties: true,
    title: 'stream_start',
    description: `Starts a streaming message (agents only), exactly like POST /api/v1/channels/{id}/messages with \`"stream": true\`; answered with \`ack\` carrying the message (\`stream_state\` \`streaming\`).${IGNORED}`,
  },
)

export const StreamAppendFrame = Type.Object(
  {
    type: Type.Literal('stream_append'),
    ...ClientIds,
    channel_id: Uuid,
    message_id: Uuid,
    append: Type.Optional(StreamText),
    appends: Type.Optional(Type.Array(StreamText, { minItems: 1, maxItems: 100 })),
  },
  {
    additionalProperties: true,
    title: 'stream_append',
    description: `Appends to the sender's streaming message, exactly like POST …/messages/{message_id}/stream (\`append\`, or \`appends\`, not both); answered with \`stream_ack\`. Frames of one socket are handled in order.${IGNORED}`,
  },
)

export const StreamFinishFrame = Type.Object(
  {
    type: Type.Literal('stream_finish'),
    ...ClientIds,
    channel_id: Uuid,
    message_id: Uuid,
    text: Type.Optional(Type.String({ description: 'Optional final text, replacing what was appended.' })),
  },
  {
    additionalProperties: true,
    title: 'stream_finish',
    description: `Finishes the sender's streaming message, exactly like POST …/stream/finish; answered with \`ack\` carrying the message.${IGNORED}`,
  },
)

export const StreamCancelFrame = Type.Object(
  { type: Type.Literal('stream_cancel'), ...ClientIds, channel_id: Uuid, message_id: Uuid },
  {
    additionalProperties: true,
    title: 'stream_cancel',
    description: `Cancels the sender's streaming message, exactly like POST …/stream/cancel; answered with \`ack\` carrying the message.${IGNORED}`,
  },
)

export const StreamAckFrame = Type.Object(
  {
    type: Type.Literal('stream_ack'),
    id: EchoedId(', null if it had neither'),
    client_id: EchoedClientId,
    message_id: Uuid,
    seq: Type.Integer({ minimum: 1, description: "The number of the frame's last append." }),
    length: Type.Integer({ minimum: 0, description: "The message's text length after it, in UTF-16 code units." }),
  },
  { additionalProperties: false, title: 'stream_ack', description: 'Answer to `stream_append`: the append is stored.' },
)

export const PingFrame = Type.Object(
  { type: Type.Literal('ping'), ...ClientIds },
  { additionalProperties: true, title: 'ping', description: `Application-level keep-alive for clients that cannot see protocol pings (browsers).${IGNORED}` },
)

export type SendMessage = Static<typeof SendMessageFrame>

/** The frames the server sends besides event frames. */
export const CONTROL_FRAMES = {
  ready: ReadyFrame,
  resync_required: ResyncRequiredFrame,
  ack: AckFrame,
  error: ErrorFrame,
  pong: PongFrame,
  // Ephemeral signals (src/realtime/signals.ts): not in the event log.
  typing: TypingFrame,
  agent_status: AgentStatusFrame,
  presence: PresenceFrame,
  user_updated: UserUpdatedFrame,
  message_delta: MessageDeltaFrame,
  message_status: MessageStatusFrame,
  thread_status: ThreadStatusFrame,
  stream_ack: StreamAckFrame,
} as const

/** Every frame the server sends (a catalog's event frames, then the control frames). */
export function serverFramesOf(catalog: EventCatalog): Record<string, TSchema> {
  return { ...eventFrameSchemas(catalog), ...CONTROL_FRAMES }
}

/** Every frame the server sends, for validation in tests and the AsyncAPI document. */
export const SERVER_FRAMES: Record<string, TSchema> = { ...EVENT_FRAMES, ...CONTROL_FRAMES }

// Keyed by message name in the AsyncAPI document: the client's `typing` is `client_typing` there,
// since the server's `typing` frame has that name.
export const CLIENT_FRAMES = {
  send_message: SendMessageFrame,
  client_typing: TypingClientFrame,
  ping: PingFrame,
  stream_start: StreamStartFrame,
  stream_append: StreamAppendFrame,
  stream_finish: StreamFinishFrame,
  stream_cancel: StreamCancelFrame,
} as const
