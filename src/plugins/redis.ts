// Redis when REDIS_URL is set (production, several instances); absent otherwise (single node).
// Commands fail fast while Redis is away instead of queueing, so callers can degrade; ioredis
// keeps reconnecting in the background.
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { Redis, type RedisOptions } from 'ioredis'

declare module 'fastify' {
  interface FastifyInstance {
    /** null in single-node mode. */
    redis: Redis | null
    redisPrefix: string
    /** A new connection with the same settings (and these), for blocking reads and subscriptions. */
    redisDuplicate: (options?: RedisOptions) => Redis
  }
}

export function createRedis(url: string, options: RedisOptions = {}): Redis {
  const redis = new Redis(url, {
    lazyConnect: false,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    retryStrategy: (times) => Math.min(times * 200, 2_000),
    ...options,
  })
  // Connection errors are reported by /health; without a listener ioredis logs each one.
  redis.on('error', () => {})
  return redis
}

const READY_WAIT_MS = 5_000

/** Resolves when the client is ready, reports an error, or `ms` passed, whichever comes first. */
export function untilReadyOrFailed(redis: Redis, ms: number): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve()
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer)
      redis.off('ready', done).off('error', done).off('end', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    timer.unref()
    redis.once('ready', done).once('error', done).once('end', done)
  })
}

/**
 * Subscribes `sub` to `channel` once the connection is ready (it refuses commands before: no
 * offline queue), waiting for that at most `waitMs` so that messages flow once the app is ready;
 * a connection ready later still subscribes then.
 */
export async function subscribeWhenReady(sub: Redis, channel: string, onError: (error: unknown) => void, waitMs = 3_000): Promise<void> {
  const subscribe = (): Promise<unknown> => sub.subscribe(channel).catch(onError)
  if (sub.status === 'ready') return void (await subscribe())
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, waitMs)
    timer.unref()
    sub.once('ready', () => {
      clearTimeout(timer)
      void subscribe().then(() => resolve())
    })
  })
}

async function redisPlugin(app: FastifyInstance, opts: { url?: string; prefix: string }): Promise<void> {
  const clients: Redis[] = []
  const make = (options?: RedisOptions): Redis => {
    if (!opts.url) throw new Error('Redis is not configured')
    const client = createRedis(opts.url, options)
    clients.push(client)
    return client
  }
  const redis = opts.url ? make() : null
  app.decorate('redis', redis)
  app.decorate('redisPrefix', opts.prefix)
  app.decorate('redisDuplicate', make)
  // Start once the connection is ready, so that the first requests' commands are not refused (no
  // offline queue): 1,000 sockets connecting right after start-up had their presence signals
  // refused. Redis being down does not hold the start: the first error ends the wait.
  if (redis) await untilReadyOrFailed(redis, READY_WAIT_MS)
  app.addHook('onClose', async () => {
    await Promise.all(clients.map((c) => c.quit().catch(() => c.disconnect())))
  })
}

export default fp(redisPlugin, { name: 'redis' })
