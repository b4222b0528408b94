// buildApp(config): the whole service as one Fastify instance. Plugins first (errors, data,
// auth, limits, documentation), then the domain modules, then realtime and background workers,
// which only subscribe to domain events.
import Fastify, { type FastifyInstance } from 'fastify'
import type { Config } from './config.ts'
import { uuidv7 } from './lib/ids.ts'
import { redactUrl } from './lib/redact.ts'
import { buildSerializer } from './lib/serializer-compiler.ts'
import { buildValidator } from './lib/validator-compiler.ts'
import authPlugin from './plugins/auth.ts'
import dbPlugin from './plugins/db.ts'
import { clientErrorHandler, frameworkErrors } from './plugins/client-errors.ts'
import errorsPlugin from './plugins/errors.ts'
import metricsPlugin from './plugins/metrics.ts'
import inputGuardPlugin from './plugins/input-guard.ts'
import loginLimitPlugin from './plugins/login-limit.ts'
import openapiPlugin from './plugins/openapi.ts'
import pressurePlugin from './plugins/pressure.ts'
import rateLimitPlugin from './plugins/rate-limit.ts'
import redisPlugin from './plugins/redis.ts'
import shutdownPlugin, { drain as connectionDrain } from './plugins/shutdown.ts'
import webPlugin from './plugins/web.ts'
import inboxBell from './plugins/inbox-bell.ts'
import type { ServiceContext } from './modules/context.ts'
import healthRoutes from './modules/health/routes.ts'
import bootstrapRoutes from './modules/bootstrap/routes.ts'
import accountRoutes from './modules/accounts/routes.ts'
import inviteRoutes from './modules/invites/routes.ts'
import agentRoutes from './modules/agents/routes.ts'
import workspaceRoutes from './modules/workspace/routes.ts'
import channelRoutes from './modules/channels/routes.ts'
import messageRoutes from './modules/messages/routes.ts'
import streamRoutes from './modules/streams/routes.ts'
import reactionRoutes from './modules/reactions/routes.ts'
import approvalRoutes from './modules/approvals/routes.ts'
import presenceRoutes from './modules/presence/routes.ts'
import dmRoutes from './modules/dm/routes.ts'
import directoryRoutes from './modules/directory/routes.ts'
import eventRoutes from './realtime/event-log/routes.ts'
import webhookRoutes from './modules/webhooks/routes.ts'
import integrationRoutes from './modules/integrations/routes.ts'
import mentionRoutes from './modules/mentions/routes.ts'
import inboxRoutes from './modules/inbox/routes.ts'
import realtime from './realtime/plugin.ts'
import httpEvents from './realtime/http-events.ts'
import workers from './workers/plugin.ts'
import mcp from './mcp/plugin.ts'

/** Config after start-up has resolved the database and the JWT secret. */
export type AppConfig = Config & { databaseUrl: string; jwtSecret: string }

export interface BuildOptions {
  /** Where the JSON log lines go (default stdout); tests read the log through it. */
  logStream?: { write: (line: string) => void }
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
    /** What the domain modules' services are called with (src/modules/context.ts). */
    ctx: ServiceContext
  }
}

export async function buildApp(config: AppConfig, options: BuildOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: {
      level: config.logLevel,
      ...(options.logStream ? { stream: options.logStream } : {}),
      redact: { paths: ['req.headers.authorization'], censor: '[redacted]' },
      serializers: {
        req: (req) => ({ method: req.method, url: redactUrl(req.url ?? ''), reqId: req.id }),
      },
    },
    bodyLimit: config.bodyLimitBytes,
    genReqId: () => uuidv7(),
    requestIdHeader: 'x-request-id',
    // Requests that arrive while closing are served, with `Connection: close` (src/plugins/shutdown.ts).
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    ajv: {
      customOptions: { removeAdditional: false, coerceTypes: 'array', useDefaults: true, allErrors: false },
    },
    // coerceTypes applies to query strings, path parameters and headers only (never bodies).
    schemaController: { compilersFactory: { buildValidator: buildValidator(), buildSerializer: buildSerializer() } },
    // Errors before routing answer {error, code} too (src/plugins/client-errors.ts).
    clientErrorHandler,
    frameworkErrors,
  })
  app.decorate('config', config)
  app.decorate('background', options.background ?? true)
  // Every response, errors included, names its request (clients quote it; logs carry it as reqId).
  // Hooks that do not wait for anything take the callback form: an async hook costs every request
  // a promise and a turn of the microtask queue (docs/performance.md, "The cost over the floor").
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id)
    done()
  })

  await app.register(errorsPlugin)
  // First of the preClose hooks: a stop closes the listening socket before anything else.
  await app.register(shutdownPlugin)
  await app.register(pressurePlugin)
  await app.register(inputGuardPlugin)
  await app.register(dbPlugin, {
    databaseUrl: config.databaseUrl,
    poolSize: config.databasePoolSize,
    statementTimeoutMs: config.databaseStatementTimeoutMs,
    queryTimeoutMs: config.databaseQueryTimeoutMs,
  })
  await app.register(metricsPlugin)
  await app.register(redisPlugin, { url: config.redisUrl, prefix: config.redisPrefix })
  // Before auth, so requests with bad credentials count against the limit too.
  await app.register(rateLimitPlugin)
  await app.register(loginLimitPlugin)
  await app.register(authPlugin, { jwtSecret: config.jwtSecret, keyCacheTtlMs: config.authCacheTtlMs })
  await app.register(openapiPlugin)
  // Event streams and long polls (the hub is looked up per request); they end when a stop begins.
  await app.register(httpEvents)
  await app.register(inboxBell)
  app.decorate('ctx', serviceContext(app))

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
      await api.register(streamRoutes)
      await api.register(reactionRoutes)
      await api.register(approvalRoutes)
      await api.register(presenceRoutes)
      await api.register(dmRoutes)
      await api.register(directoryRoutes)
      await api.register(eventRoutes)
      await api.register(webhookRoutes)
      await api.register(mentionRoutes)
      await api.register(inboxRoutes)
      await api.register(integrationRoutes)
    },
    { prefix: '/api/v1' },
  )
  await app.register(realtime)
  await app.register(mcp)
  await app.register(workers)
  await app.register(webPlugin)
  // Last, so that its wait for open connections comes after every other plugin's preClose.
  await app.register(connectionDrain)
  return app
}

/**
 * The services' context, from the plugins registered so far. The real-time layer and the workers
 * register after the modules (they subscribe to the modules' events), so their parts are looked
 * up when called; an app built without them gets the no-ops the services used to check for.
 */
function serviceContext(app: FastifyInstance): ServiceContext {
  const realtime = () => (app.hasDecorator('realtime') ? app.realtime : null)
  return {
    db: app.db,
    config: app.config,
    events: app.events,
    log: app.log,
    redis: app.redis,
    redisPrefix: app.redisPrefix,
    presence: { online: async (ids) => (await realtime()?.presence.online(ids)) ?? new Set() },
    signals: {
      typing: (principal, channelId) => realtime()?.signals.typing(principal, channelId),
      publish: (signal) => realtime()?.signals.publish(signal),
    },
    listeners: { isMemberOf: (memberId, channelId) => realtime()?.hub.isMemberOf(memberId, channelId) ?? false },
    inboxBell: app.inboxBell,
    loginLimit: app.loginLimit,
    forgetAgentKeys: (agentId) => app.forgetAgentKeys(agentId),
    tokens: {
      sign: (userId, sessionVersion) => app.signUserToken(userId, sessionVersion),
      decode: (token) => app.jwt.decode<{ exp: number }>(token),
    },
    kickDeliveries: () => void app.deliveries?.scheduler.kick(),
  }
}
