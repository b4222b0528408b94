// GET /api/v1/events: the event log as a client may read it (the same frames as the WebSocket).
import { Type, type Static } from 'typebox'
import { OnlyField } from '../../events/filter.ts'
import { CursorSchema, EventFrameSchema, SINCE_INTEGER_NOTE, SinceSchema } from '../frames.ts'

export const EVENT_PAGE_DEFAULT = 100
export const EVENT_PAGE_MAX = 500
/** Longest long poll (`wait`), in seconds: below the idle timeouts of common proxies (60 s). */
export const EVENT_WAIT_MAX_SECONDS = 30

/** The filter vocabulary (src/events/filter.ts), the same on every transport. */
export const FilterQuery = {
  only: Type.Optional(OnlyField),
  include_own_messages: Type.Optional(Type.Boolean({ description: "false: no `new_message` / `message_updated` events for the caller's own messages (docs/loops.md). Default true." })),
}

export const EventLogQuery = Type.Object(
  {
    ...FilterQuery,
    since: Type.Optional({
      ...SinceSchema,
      description: `Return the events after this cursor (the \`next_cursor\` of the previous page, or a WebSocket frame's \`cursor\`). ${SINCE_INTEGER_NOTE} Absent: from the oldest retained event; \`now\`: an empty page whose \`next_cursor\` is the newest event (with \`wait\`, only what happens next).`,
    }),
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: EVENT_PAGE_MAX, default: EVENT_PAGE_DEFAULT, description: `At most this many events (default ${EVENT_PAGE_DEFAULT}, maximum ${EVENT_PAGE_MAX}).` }),
    ),
    wait: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: EVENT_WAIT_MAX_SECONDS,
        examples: [25],
        description: `Long polling: when there is nothing to return yet, hold the request up to this many seconds (at most ${EVENT_WAIT_MAX_SECONDS}) and answer as soon as an event the caller may see arrives. At the deadline the answer is an empty page whose \`next_cursor\` is where the log was read up to (the \`since\` given, when nothing at all happened). Absent or 0: answer at once.`,
      }),
    ),
  },
  { additionalProperties: false },
)

export const EventPageSchema = Type.Object(
  {
    events: Type.Array(EventFrameSchema, { description: 'Oldest first; only events of channels the caller belongs to (and removals addressed to the caller).' }),
    next_cursor: { ...CursorSchema, description: 'Pass as `since` for the next page. Always present, also when `events` is empty.' },
    has_more: Type.Boolean({ description: 'True when the log holds later events than `next_cursor` already: ask again at once. False: poll later.' }),
    resync_required: Type.Boolean({
      description: '`since` is older than the retained history (or unknown to this log): events may have been missed. Reload state over REST and continue from `next_cursor`.',
    }),
  },
  { additionalProperties: false },
)

/** GET /api/v1/events/stream */
export const EventStreamQuery = Type.Object(
  {
    ...FilterQuery,
    since: Type.Optional({
      ...SinceSchema,
      description: `Start after this cursor (an event's \`id:\`, a frame's \`cursor\`, a page's \`next_cursor\`). ${SINCE_INTEGER_NOTE} The \`Last-Event-ID\` header, which EventSource clients send when they reconnect, takes precedence. Neither: live events from now on.`,
    }),
  },
  { additionalProperties: false },
)

export const EventStreamHeaders = Type.Object({
  // Lower case: Fastify matches header schemas as written (TypeBox objects are not normalised).
  'last-event-id': Type.Optional({
    ...SinceSchema,
    description: 'The `id:` of the last event received (a cursor): the stream resumes after it. Sent by EventSource clients when they reconnect; wins over `since`.',
  }),
})

export type EventLogQueryT = Static<typeof EventLogQuery>
export type EventStreamQueryT = Static<typeof EventStreamQuery>
export type EventStreamHeadersT = Static<typeof EventStreamHeaders>
export type EventPage = Static<typeof EventPageSchema>
