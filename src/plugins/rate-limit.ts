// API rate limiting with @fastify/rate-limit. Off by default (self-hosted); when on, the whole
// workspace shares one budget of N requests per minute, as the spec states the limit ("per
// workspace"). N is the workspace setting (instance.rate_limit_per_minute, changed with
// PATCH /api/v1/workspace) or else RATE_LIMIT_PER_MINUTE; 0 means no limit. The counter lives in
// Redis when REDIS_URL is set, so the budget holds across instances; in memory otherwise.
// One app-level onRequest hook covers every route and the 404 handler; it is registered before
// the auth plugin's, so requests with bad credentials are counted too. /health (probes) and the
// documentation are not API requests and are not counted.
// Requests without a valid credential (none, a wrong one, an unknown route hit anonymously) do
// not draw on the workspace's budget: each client address has its own budget of the same size,
// so strangers cannot lock the workspace out. The workspace owner's PATCH /api/v1/workspace (the
// way to change the limit) is never limited.
import rateLimit from '@fastify/rate-limit'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { AppError } from '../lib/errors.ts'
import { cachedRateLimitPerMinute, rateLimitPerMinute } from '../modules/workspace/settings.ts'
import { isOwner } from '../modules/identity/principal.ts'

const WINDOW_MS = 60_000
const WORKSPACE_KEY = 'workspace'

const limitOf = new WeakMap<FastifyRequest, number>()
const keyOf = new WeakMap<FastifyRequest, string>()
const SETTINGS_ROUTE = '/api/v1/workspace'

function exempt(url: string): boolean {
  const path = url.split('?')[0] ?? url
  return path === '/health' || path.startsWith('/health/') || path === '/openapi.json' || path === '/docs' || path.startsWith('/docs/')
}

async function rateLimitPlugin(app: FastifyInstance): Promise<void> {
  await app.register(rateLimit, {
    global: false,
    max: (request: FastifyRequest) => limitOf.get(request) ?? 0,
    timeWindow: WINDOW_MS,
    keyGenerator: (request: FastifyRequest) => keyOf.get(request) ?? WORKSPACE_KEY,
    ...(app.redis ? { redis: app.redis, nameSpace: `${app.redisPrefix}rate-limit:` } : {}),
    // A Redis outage lets requests through rather than failing them.
    skipOnError: true,
    errorResponseBuilder: (request, context) =>
      new AppError(
        'RATE_LIMITED',
        `rate limit of ${context.max} requests per minute ${keyOf.get(request) === WORKSPACE_KEY ? 'for the workspace' : 'for unauthenticated requests from this address'} exceeded; retry in ${context.after}`,
      ),
  })

  // Any API route can answer 429 while a limit is on: document it everywhere.
  app.addHook('onRoute', (route) => {
    if (!route.url.startsWith('/api/') || !route.schema || route.schema.hide) return
    const schema = route.schema as { response?: Record<string, unknown> }
    schema.response ??= {}
    schema.response[429] ??= {
      description: 'Rate limited (only when a limit is configured). `Retry-After` gives the seconds to wait.',
      headers: { 'Retry-After': { type: 'integer', description: 'Seconds until the budget has room again.' } },
      content: { 'application/json': { schema: { $ref: 'Error#' } } },
    }
  })

  const limiter = app.rateLimit()
  const limited = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const limit = await rateLimitPerMinute(app.ctx)
    if (limit <= 0) return
    const principal = await app.principalOf(request)
    if (principal && isOwner(principal) && request.method === 'PATCH' && request.routeOptions.url === SETTINGS_ROUTE) return
    limitOf.set(request, limit)
    keyOf.set(request, principal ? WORKSPACE_KEY : `anonymous:${request.ip}`)
    await limiter.call(app, request, reply)
  }
  // Without a limit (the default), and the setting read in the last few seconds, a request waits
  // for nothing here: the callback form spares it a promise.
  app.addHook('onRequest', (request, reply, done) => {
    if (exempt(request.url) || cachedRateLimitPerMinute(app.ctx) === 0) return done()
    limited(request, reply).then(() => done(), done)
  })
}

export default fp(rateLimitPlugin, { name: 'rate-limit', dependencies: ['db', 'redis'] })
