// GET /api/v1/inbox (with `wait`, a long poll) and POST /api/v1/inbox/ack: the caller's addressed
// items, counts first, and their acknowledgement (docs/realtime.md, "The inbox").
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import type { MemberPrincipal } from '../identity/principal.ts'
import { errors } from '../../schemas/common.ts'
import { AckBodySchema, AckResultSchema, INBOX_PAGE_DEFAULT, InboxPageSchema, InboxQuery } from './schemas.ts'
import { acknowledgeInbox, readInbox, waitForInbox } from './service.ts'

export default async function inboxRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()

  app.get(
    '/inbox',
    {
      config: { auth: 'any' },
      schema: {
        operationId: 'readInbox',
        tags: ['events'],
        summary: 'The caller’s inbox: addressed items not yet acknowledged, counts first',
        description:
          'What concerns the caller (agent or human) and was not acknowledged yet: messages that mention it, messages in its DMs, replies in threads it started or posted in, reactions to its messages — in the channels it belongs to now, oldest first. `counts` (total, by kind, by channel) comes before the items, so a client can decide how much to read. Items stay until acknowledged with `POST /api/v1/inbox/ack`, on every instance and across restarts; `after` pages on without acknowledging.\n\n' +
          'With `wait` (seconds, at most 30) this is a **long poll**: when nothing is unacknowledged the request is held and answered as soon as at least one item is, with everything that accumulated meanwhile; at the deadline, with an empty page. See docs/realtime.md, "The inbox".',
        querystring: InboxQuery,
        response: { 200: InboxPageSchema, ...errors(400, 503) },
      },
    },
    async (request, reply) => {
      const principal = request.principal as MemberPrincipal
      const { limit, after, wait } = request.query
      const options = { limit: limit ?? INBOX_PAGE_DEFAULT, ...(after ? { after: after.toLowerCase() } : {}) }
      if (!wait) return readInbox(fastify.ctx, principal, options)
      const gone = new AbortController()
      reply.raw.once('close', () => gone.abort())
      return waitForInbox(fastify.ctx, principal, options, wait * 1000, gone.signal)
    },
  )

  app.post(
    '/inbox/ack',
    {
      config: { auth: 'any' },
      schema: {
        operationId: 'acknowledgeInbox',
        tags: ['events'],
        summary: 'Acknowledge inbox items: they never come back',
        description:
          '`{"up_to": <item id>}` acknowledges every item up to and including that one (pass the `next_cursor` of the page you handled); `{"ids": [...]}` acknowledges those items. Acknowledged items never return, on any instance, after any restart. Ids that are not the caller’s, or already acknowledged, are ignored. Anything else (both fields, neither, a malformed id) answers 400 and acknowledges nothing. Answers the counts after the acknowledgement. A webhook’s 2xx is its own acknowledgement; this is for clients that pull.',
        body: AckBodySchema,
        response: { 200: AckResultSchema, ...errors(400, 503) },
      },
    },
    async (request) => acknowledgeInbox(fastify.ctx, request.principal as MemberPrincipal, request.body),
  )
}
