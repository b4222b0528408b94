// buildApp(config): the whole service as one Fastify instance. Plugins first (errors, data,
// auth, limits, documentation), then the domain modules, then realtime and background workers,
// which only subscribe to domain events.
import Fastify, { type FastifyInstance } from 'fastify'
import type { Config } from './config.ts'
import { uuidv7 } from './lib/ids.ts'
import authPlugin from './plugins/auth.ts'
import dbPlugin from './plugins/db.ts'
import errorsPlugin from './plugins/errors.ts'
import openapiPlugin from './plugins/openapi.ts'
import rateLimitPlugin from './plugins/rate-limit.ts'
import redisPlugin from './plugins/redis.ts'
import healthRoutes from './modules/health/routes.ts'
import bootstrapRoutes from './modules/bootstrap/routes.ts'
import accountRoutes from './modules/accounts/routes.ts'
import inviteRoutes from './modules/invites/routes.ts'
import agentRoutes from './modules/agents/routes.ts'
import workspaceRoutes from './modules/workspace/routes.ts'
import channelRoutes from './modules/channels/routes.ts'
import messageRoutes from './modules/messages/routes.ts'
import dmRoutes from './modules/dm/routes.ts'
import eventRoutes from './modules/events/routes.ts'
import webhookRoutes from './modules/webhooks/routes.ts'
import integrationRoutes from './modules/integrations/routes.ts'
import realtime from './realtime/plugin.ts'
import workers from './workers/plugin.ts'

/** Config after start-up has resolved the database and the JWT secret. */
export type AppConfig = Config & { databaseUrl: string; jwtSecret: string }

export interface BuildOptions {
  /**
   * Start background work (event relay, delivery workers, keep-alive timers). False only for
   * tools that need the routes but no running service, such as the OpenAPI export.
   */
  background?: boolean
}

declare module 'fastify' {
  interface FastifyInstance {
    config: AppConfig
    /** Whether background loops run in this instance (see BuildOptions). */
    background: boolean
  }
}

export async function buildApp(config: AppConfig, options: BuildOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: {
      level: config.logLevel,
      redact: { paths: ['req.headers.authorization'], censor: '[redacted]' },
      serializers: {
        req: (req) => ({ method: req.method, url: (req.url ?? '').replace(/([?&]token=)[^&]*/g, '$1[redacted]'), reqId: req.id }),
      },
    },
    bodyLimit: config.bodyLimitBytes,
    genReqId: () => uuidv7(),
    requestIdHeader: 'x-request-id',
    // Requests that arrive while closing get our own 503 {error, code} (src/plugins/errors.ts).
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    ajv: {
      customOptions: { removeAdditional: false, coerceTypes: 'array', useDefaults: true, allErrors: false },
    },
  })
  app.decorate('config', config)
  app.decorate('background', options.background ?? true)

  await app.register(errorsPlugin)
  await app.register(dbPlugin, { databaseUrl: config.databaseUrl, poolSize: config.databasePoolSize })
  await app.register(redisPlugin, { url: config.redisUrl, prefix: config.redisPrefix })
  // Before auth, so requests with bad credentials count against the limit too.
  await app.register(rateLimitPlugin)
  await app.register(authPlugin, { jwtSecret: config.jwtSecret, keyCacheTtlMs: config.authCacheTtlMs })
  await app.register(openapiPlugin)

  await app.register(healthRoutes)
  await app.register(
    async (api) => {
      await api.register(bootstrapRoutes)
      await api.register(accountRoutes)
      await api.register(inviteRoutes)
      await api.register(agentRoutes)
      await api.register(workspaceRoutes)
      await api.register(channelRoutes)
      await api.register(messageRoutes)
      await api.register(dmRoutes)
      await api.register(eventRoutes)
      await api.register(webhookRoutes)
      await api.register(integrationRoutes)
    },
    { prefix: '/api/v1' },
  )
  await app.register(realtime)
  await app.register(workers)
  return app
}
