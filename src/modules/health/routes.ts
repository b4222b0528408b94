// GET /health: live checks of the database and Redis, each bounded by a short timeout so a hung
// dependency shows as disconnected instead of hanging the probe. Always 200 (the spec's contract).
// GET /health/ready: the same checks as a readiness probe for load balancers, the image's
// HEALTHCHECK and compose: 503 while the database is unreachable, Redis is unreachable in
// multi-instance mode (REDIS_URL set), or the server is shutting down.
import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { withTimeout } from '../../lib/timeout.ts'
import { ErrorRef } from '../../schemas/common.ts'
import { pingDatabase } from './repo.ts'

const CHECK_TIMEOUT_MS = 1_000

const DatabaseState = Type.Union([Type.Literal('connected'), Type.Literal('disconnected')])
const RedisState = Type.Union([Type.Literal('connected'), Type.Literal('disconnected'), Type.Literal('disabled')], {
  description: '`disabled` in single-node mode (no REDIS_URL).',
})

const HealthSchema = Type.Object(
  {
    status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')], { description: '`ok` when every configured dependency answers.' }),
    database: DatabaseState,
    redis: RedisState,
  },
  { additionalProperties: false },
)

const readinessSchema = (description: string) =>
  Type.Object(
    {
      status: Type.Union([Type.Literal('ready'), Type.Literal('unavailable'), Type.Literal('shutting_down')], {
        description: '`ready` (200) when the database answers, Redis too if configured, and the server is not shutting down.',
      }),
      database: DatabaseState,
      redis: RedisState,
    },
    { additionalProperties: false, description },
  )

interface Checks {
  database: 'connected' | 'disconnected'
  redis: 'connected' | 'disconnected' | 'disabled'
}

export default async function healthRoutes(app: FastifyInstance): Promise<void> {
  const check = async (): Promise<Checks> => {
    const [database, redis] = await Promise.all([
      withTimeout(pingDatabase(app.db.pool), CHECK_TIMEOUT_MS).then(
        () => 'connected' as const,
        () => 'disconnected' as const,
      ),
      !app.redis
        ? ('disabled' as const)
        : withTimeout(app.redis.ping(), CHECK_TIMEOUT_MS).then(
            () => 'connected' as const,
            () => 'disconnected' as const,
          ),
    ])
    return { database, redis }
  }

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
      const { database, redis } = await check()
      const status = database === 'connected' && redis !== 'disconnected' ? 'ok' : 'degraded'
      return { status, database, redis }
    },
  )

  app.get(
    '/health/ready',
    {
      config: { auth: 'public' },
      schema: {
        security: [],
        operationId: 'getReadiness',
        tags: ['system'],
        summary: 'Readiness to serve traffic',
        description:
          'For load balancers and container health checks. 200 when this instance can serve requests; 503 while PostgreSQL is unreachable, ' +
          'Redis is unreachable in multi-instance mode (REDIS_URL set), or the server is shutting down. Each dependency check gives up ' +
          'after 1 s. Once a graceful stop has begun new connections are refused, and a probe on a connection still open gets `shutting_down` ' +
          '(and `Connection: close`). Not rate-limited.',
        response: {
          200: readinessSchema('This instance can serve requests.'),
          503: Type.Union([readinessSchema('The dependency that is down, or `shutting_down`.'), ErrorRef], {
            description: 'Not ready: the body names the dependency that is down, or `shutting_down`; a request refused before the check gets `{error, code}`.',
          }),
        },
      },
    },
    async (_request, reply) => {
      const { database, redis } = await check()
      const up = database === 'connected' && redis !== 'disconnected'
      // A probe on a connection still open once the stop began (src/plugins/shutdown.ts).
      const status = app.shutdown.startedAt !== null ? 'shutting_down' : up ? 'ready' : 'unavailable'
      reply.header('cache-control', 'no-store')
      return reply.code(status === 'ready' ? 200 : 503).send({ status, database, redis })
    },
  )
}
