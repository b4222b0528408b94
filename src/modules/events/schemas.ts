// GET /api/v1/events: the event log as a client may read it (the same frames as the WebSocket).
import { Type, type Static } from 'typebox'
import { CursorSchema, EventFrameSchema, SINCE_INTEGER_NOTE, SinceSchema } from '../../realtime/frames.ts'

export const EVENT_PAGE_DEFAULT = 100
export const EVENT_PAGE_MAX = 500

export const EventLogQuery = Type.Object(
  {
    since: Type.Optional({
      ...SinceSchema,
      description: `Return the events after this cursor (the \`next_cursor\` of the previous page, or a WebSocket frame's \`cursor\`). ${SINCE_INTEGER_NOTE} Absent: from the oldest retained event.`,
    }),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: EVENT_PAGE_MAX, default: EVENT_PAGE_DEFAULT, description: `At most this many events (default ${EVENT_PAGE_DEFAULT}, maximum ${EVENT_PAGE_MAX}).` })),
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

export type EventLogQueryT = Static<typeof EventLogQuery>
export type EventPage = Static<typeof EventPageSchema>
