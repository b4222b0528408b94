// Background delivery of webhooks and integrations (src/workers/deliveries.ts), the search
// index's pending-list flush (src/workers/search-index.ts) and the sweep of expired
// Idempotency-Key responses (src/workers/idempotency-sweeper.ts). Starts only when
// app.background is true; on close it stops planning, lets attempts in flight finish and hands
// back deliveries it had claimed but not started, so another instance (or the next start) sends
// them at once.
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { DeliveryEngine } from './deliveries.ts'
import { IdempotencySweeper } from './idempotency-sweeper.ts'
import { MemoryQueue, RedisQueue, type DeliveryQueue } from './queue.ts'
import { releaseClaims } from './repo.ts'
import { SearchIndexFlusher } from './search-index.ts'

declare module 'fastify' {
  interface FastifyInstance {
    /** Null when background work is off (app.background false). */
    deliveries: DeliveryEngine | null
    /** Null when background work is off. */
    searchIndex: SearchIndexFlusher | null
  }
}

async function workersPlugin(app: FastifyInstance): Promise<void> {
  if (!app.background) {
    app.decorate('deliveries', null)
    app.decorate('searchIndex', null)
    return
  }
  const { config } = app
  const options = DeliveryEngine.options(app)
  let engine: DeliveryEngine | null = null
  const kickScheduler = (): void => void engine?.scheduler.kick()
  const queue: DeliveryQueue = app.redis
    ? new RedisQueue(app.redis, app.redisDuplicate, app.redisPrefix, config.webhookConcurrency, options.leaseMs, app.log, kickScheduler)
    : new MemoryQueue(config.webhookConcurrency, app.log, kickScheduler)
  engine = new DeliveryEngine(app, queue, options)
  app.decorate('deliveries', engine)
  const searchIndex = new SearchIndexFlusher(app.db.pool, config.searchIndexFlushMs, app.log)
  app.decorate('searchIndex', searchIndex)
  const idempotencySweeper = new IdempotencySweeper(app.db.pool, app.log)

  const running = engine
  let timer: NodeJS.Timeout | null = null
  let unsubscribe: (() => void) | null = null
  let stopped = false

  app.addHook('onReady', async () => {
    // The planner updates every outbox row anyway: it also sets the relay's published marks.
    if (app.hasDecorator('realtime')) running.publishedMarks = app.realtime.relay
    await queue.start(running.attempt)
    // Every commit that carries events: plan its deliveries now rather than on the next tick.
    unsubscribe = app.events.subscribe(() => void running.planner.kick())
    const tick = (): void => {
      void Promise.all([running.planner.kick(), running.scheduler.kick()]).finally(() => {
        if (!stopped) timer = setTimeout(tick, config.webhookPollIntervalMs)
      })
    }
    tick()
    searchIndex.start()
    idempotencySweeper.start()
  })

  app.addHook('onClose', async () => {
    stopped = true
    unsubscribe?.()
    if (timer) clearTimeout(timer)
    idempotencySweeper.stop()
    running.stop()
    await Promise.all([running.planner.idle(), running.scheduler.idle(), searchIndex.stop()])
    const unstarted = [...(await queue.stop()), ...running.takeParked()]
    running.close()
    await releaseClaims(app.db.pool, unstarted).catch((error: unknown) => app.log.warn({ err: error }, 'could not release claimed deliveries'))
  })
}

export default fp(workersPlugin, { name: 'workers', dependencies: ['db', 'redis'] })
