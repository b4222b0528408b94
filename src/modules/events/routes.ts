// GET /api/v1/events: the replayable event log over REST, for agents that poll instead of
// holding a WebSocket. Same events, cursors and membership rules as the gateway.
import type { FastifyInstance } from 'fastify'
import type { MemberPrincipal } from '../../plugins/auth.ts'
import { sinceCursor } from '../../realtime/cursor.ts'
import { errors } from '../../schemas/common.ts'
import { EVENT_PAGE_DEFAULT, EventLogQuery, EventPageSchema, type EventLogQueryT } from './schemas.ts'
import { readEventLog } from './service.ts'

export default async function eventsRoutes(app: FastifyInstance): Promise<void> {
  app.get<{ Querystring: EventLogQueryT }>(
    '/events',
    {
      config: { auth: 'any' },
      schema: {
        operationId: 'listEvents',
        tags: ['events'],
        summary: 'Read the event log (polling alternative to the WebSocket)',
        description:
          'The events of the channels the caller belongs to, oldest first, after `since`: the same frames the WebSocket pushes (`new_message`, `message_updated`, `message_deleted`, `member_joined`, `member_left`, `channel_created`, `channel_updated`, `channel_deleted`), each with its `cursor` and `event_id`. Poll with the returned `next_cursor`. When `since` is older than the retained history, `resync_required` is true. See docs/realtime.md.',
        querystring: EventLogQuery,
        response: { 200: EventPageSchema, ...errors(400, 503) },
      },
    },
    async (request) => {
      const { since, limit } = request.query
      return readEventLog(app, request.principal as MemberPrincipal, since === undefined ? undefined : sinceCursor(since), limit ?? EVENT_PAGE_DEFAULT)
    },
  )
}
