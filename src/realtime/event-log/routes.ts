// GET /api/v1/events: the replayable event log over REST, for agents that poll instead of
// holding a WebSocket (with `wait`, a long poll). GET /api/v1/events/stream: the same events as
// Server-Sent Events. Same events, cursors and membership rules as the gateway.
import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import type { MemberPrincipal } from '../../modules/identity/principal.ts'
import type { EventFilter } from '../../events/filter.ts'
import { AppError } from '../../lib/errors.ts'
import { resolveSince, SINCE_NOW, sinceCursor, type Cursor } from '../cursor.ts'
import { errors } from '../../schemas/common.ts'
import { EVENT_PAGE_DEFAULT, EventLogQuery, EventPageSchema, EventStreamHeaders, EventStreamQuery, type EventLogQueryT, type EventStreamHeadersT, type EventStreamQueryT } from './schemas.ts'
import { readEventLog, waitForEvents } from './service.ts'
import { clientGone } from '../../lib/client-gone.ts'

const tooMany = (what: string, setting: string) => ({
  description: `Too many ${what} open for this caller at once (\`${setting}\`, per instance), or the workspace rate limit when one is configured (\`RATE_LIMITED\`). \`Retry-After\` gives the seconds to wait.`,
  headers: { 'Retry-After': { type: 'integer', description: 'Seconds to wait before retrying.' } },
  content: { 'application/json': { schema: { $ref: 'Error#' } } },
})

const STREAM_EXAMPLE = [
  'id: 1764000000000-3',
  'event: ready',
  'data: {"type":"ready","cursor":"1764000000000-3","replayed":0,"principal":{"id":"0199a1b2-0000-7000-8000-000000000001","type":"AGENT","name":"primary-agent"}}',
  '',
  ': keep-alive',
  '',
  'id: 1764000000000-4',
  'event: new_message',
  'data: {"type":"new_message","event_id":"0199a1b2-0000-7000-8000-000000000004","cursor":"1764000000000-4","occurred_at":"2026-11-24T10:00:00.000Z","channel_id":"0199a1b2-0000-7000-8000-000000000002","message":{"id":"0199a1b2-0000-7000-8000-000000000003","channel_id":"0199a1b2-0000-7000-8000-000000000002","author_id":"0199a1b2-0000-7000-8000-000000000005","author_name":"agent-1","author_type":"AGENT","text":"hello","created_at":"2026-11-24T10:00:00.000Z","edited_at":null}}',
  '',
  '',
].join('\n')

/** The filter of a request's `only` and `include_own_messages`. */
export const filterOf = (query: { only?: EventFilter['only']; include_own_messages?: boolean }): EventFilter => ({
  only: query.only ?? null,
  skipsOwnMessages: query.include_own_messages === false,
})

export default async function eventsRoutes(app: FastifyInstance): Promise<void> {
  const newest = (): Promise<Cursor> =>
    app.realtime.broker.info().then(
      (info) => info.newest,
      (cause: unknown) => Promise.reject(new AppError('SERVICE_UNAVAILABLE', 'the event log is temporarily unavailable; retry later', { cause })),
    )

  app.get<{ Querystring: EventLogQueryT }>(
    '/events',
    {
      config: { auth: 'any' },
      schema: {
        operationId: 'listEvents',
        tags: ['events'],
        summary: 'Read the event log (polling alternative to the WebSocket)',
        description:
          'The events of the channels the caller belongs to, oldest first, after `since`: the same frames the WebSocket pushes (`new_message`, `message_updated`, `message_deleted`, `member_joined`, `member_left`, `channel_created`, `channel_updated`, `channel_deleted`), each with its `cursor` and `event_id`. Poll with the returned `next_cursor`. When `since` is older than the retained history, `resync_required` is true.\n\n' +
          'With `wait` (seconds, at most 30) this is a **long poll**: when nothing is there yet the request is held and answered as soon as an event the caller may see arrives, or with an empty page at the deadline. A caller may hold `EVENTS_MAX_WAITS_PER_CALLER` (default 4) waiting requests per server instance; one more answers 429. A waiting request is answered at once when the server shuts down, and with 401 when its credential is revoked. See docs/realtime.md.',
        querystring: EventLogQuery,
        response: { 200: EventPageSchema, ...errors(400, 503), 429: tooMany('waiting requests (long polls)', 'EVENTS_MAX_WAITS_PER_CALLER') },
      },
    },
    async (request, reply) => {
      const { since, limit, wait } = request.query
      const filter = filterOf(request.query)
      const after = await resolveSince(since, newest)
      if (!wait) return readEventLog(app, request.principal as MemberPrincipal, after, limit ?? EVENT_PAGE_DEFAULT, filter)
      // Stop waiting when the client goes away.
      const gone = clientGone(request.raw, reply.raw)
      const page = await waitForEvents(app, app.eventStreams.credentialOf(request), after, limit ?? EVENT_PAGE_DEFAULT, wait * 1000, gone.signal, filter)
      if (app.eventStreams.stopping) reply.header('connection', 'close')
      return page
    },
  )

  app.get<{ Querystring: EventStreamQueryT; Headers: EventStreamHeadersT }>(
    '/events/stream',
    {
      // A HEAD request would open a stream that never sends its body: no HEAD route.
      exposeHeadRoute: false,
      config: { auth: 'any' },
      schema: {
        operationId: 'streamEvents',
        tags: ['events'],
        summary: 'Stream events as Server-Sent Events',
        description:
          "The event log as a `text/event-stream`, for clients that cannot hold a WebSocket: the same events, cursors, membership rules, replay and `resync_required` as the WebSocket (docs/realtime.md). Each event is `id: <cursor>`, `event: <type>` and `data: <the frame's JSON>`, exactly the frame the WebSocket sends and `GET /api/v1/events` lists. " +
          'With `Last-Event-ID` (or `since`) the missed events come first, or one `resync_required` when the cursor is older than the retained history; then `ready`, then live events. A comment line (`: keep-alive`) comes every 15 s (`SSE_KEEPALIVE_MS`). ' +
          'A revoked key or an expired JWT ends the stream after an `error` event (`code` `UNAUTHORIZED`); shutdown ends it with a comment; reconnect with `Last-Event-ID` either way. At most `SSE_MAX_STREAMS_PER_CALLER` (default 8) streams per caller and server instance; one more answers 429.',
        querystring: EventStreamQuery,
        headers: EventStreamHeaders,
        response: {
          200: {
            description:
              'An endless `text/event-stream` (until the client closes it, the credential is revoked or the server shuts down). Events: every frame type of the WebSocket (`new_message`, `message_updated`, …, `ready`, `resync_required`, `error`), each `data:` one line of JSON. Lines starting with `:` are keep-alive comments.',
            content: {
              'text/event-stream': {
                schema: Type.String({ description: 'Server-Sent Events (https://html.spec.whatwg.org/multipage/server-sent-events.html).' }),
                example: STREAM_EXAMPLE,
              },
            },
          },
          ...errors(400, 503),
          429: tooMany('event streams', 'SSE_MAX_STREAMS_PER_CALLER'),
        },
      },
    },
    async (request, reply) => {
      const resumeFrom = request.headers['last-event-id'] ?? request.query.since
      // since=now is the stream without a cursor: live from the newest event (`ready` carries its cursor).
      const since = resumeFrom === undefined || resumeFrom === SINCE_NOW ? undefined : sinceCursor(resumeFrom)
      await app.eventStreams.stream(request, reply, since, filterOf(request.query))
    },
  )
}
