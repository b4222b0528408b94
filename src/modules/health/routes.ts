// GET /health: live checks of the database and Redis, each bounded by a short timeout so a hung
// dependency shows as disconnected instead of hanging the probe.
import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { withTimeout } from '../../lib/timeout.ts'

const CHECK_TIMEOUT_MS = 1_000

const HealthSchema = Type.Object(
  {
    status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')], { description: '`ok` when every configured dependency answers.' }),
    database: Type.Union([Type.Literal('connected'), Type.Literal('disconnected')]),
    redis: Type.Union([Type.Literal('connected'), Type.Literal('disconnected'), Type.Literal('disabled')], {
      description: '`disabled` in single-node mode (no REDIS_URL).',
    }),
  },
  { additionalProperties: false },
)

export default async function healthRoutes(app: FastifyInstance): Promise<void> {
  app.get(
    '/health',
    {
      config: { auth: 'public' },
      schema: {
        security: [],
        operationId: 'getHealth',
        tags: ['system'],
        summary: 'Liveness and dependency status',
        response: { 200: HealthSchema },
      },
    },
    async () => {
      const database = await withTimeout(app.db.pool.query('SELECT 1'), CHECK_TIMEOUT_MS).then(
        () => 'connected' as const,
        () => 'disconnected' as const,
      )
      const redis = !app.redis
        ? ('disabled' as const)
        : await withTimeout(app.redis.ping(), CHECK_TIMEOUT_MS).then(
            () => 'connected' as const,
            () => 'disconnected' as const,
          )
      const status = database === 'connected' && redis !== 'disconnected' ? 'ok' : 'degraded'
      return { status, database, redis }
    },
  )
}
