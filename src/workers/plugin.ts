// Background delivery of webhooks and integrations (src/workers/deliveries.ts), the search
// index's pending-list flush (src/workers/search-index.ts) and the sweep of expired
// Idempotency-Key responses (src/workers/idempotency-sweeper.ts), the expiry of approval
// requests (src/workers/approval-expiry.ts) and the end of idle streams
// (src/workers/stream-sweeper.ts). Starts only when
// app.background is true.
//
// Graceful stop, from its first moment (beside the HTTP drain, src/plugins/shutdown.ts): no more
// planning or claiming; every delivery claimed but not started (queued in memory, parked for a
// busy endpoint, or a Redis stream entry held by this consumer) is handed back at once (its claim
// released: due now), so another instance, or the next start, sends it without waiting for the
// lease; attempts in flight finish, and those still running near the stop's deadline are cut
// short and handed back too. Nothing is left under a lease unless the stop itself is cut off
// (SHUTDOWN_TIMEOUT_MS, as after SIGKILL: the lease then expires).
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { DeliveryEngine } from './deliveries.ts'
import { ApprovalExpiry } from './approval-expiry.ts'
import { IdempotencySweeper } from './idempotency-sweeper.ts'
import { StreamSweeper } from './stream-sweeper.ts'
import { sweepStreams } from '../modules/streams/service.ts'
import { expireThreadStatuses } from '../modules/streams/thread-status.ts'
import { MemoryQueue, RedisQueue, type DeliveryQueue } from './queue.ts'
import { releaseClaims, type ClaimedDelivery } from './repo.ts'
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
  const approvalExpiry = new ApprovalExpiry(app, app.log)
  // Thread statuses (no stream) left unchanged expire on the same clock as idle streams.
  const streamSweeper = new StreamSweeper(async () => (await sweepStreams(app.ctx)) + (await expireThreadStatuses(app.ctx, Date.now())), app.log)

  const running = engine
  let timer: NodeJS.Timeout | null = null
  let unsubscribe: (() => void) | null = null
  let stopped = false

  app.addHook('onReady', async () => {
    // The planner updates every outbox row anyway: it also sets the relay's published marks.
    if (app.hasDecorator('realtime')) running.publishedMarks = app.realtime.relay
    if (app.hasDecorator('inboxBell')) running.inboxBell = app.inboxBell
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
    approvalExpiry.start()
    streamSweeper.start()
  })

  const handBack = (items: ClaimedDelivery[]): Promise<void> =>
    releaseClaims(app.db.pool, items).catch((error: unknown) => app.log.warn({ err: error, deliveries: items.length }, 'could not hand back claimed deliveries; they wait for their lease'))

  const stop = async (): Promise<void> => {
    stopped = true
    unsubscribe?.()
    if (timer) clearTimeout(timer)
    idempotencySweeper.stop()
    const expiryStopped = approvalExpiry.stop()
    await streamSweeper.stop()
    running.stop()
    // Attempts in flight may run until shortly before the stop's deadline, leaving time to hand
    // back those cut short and to close the rest.
    const until = app.shutdown.reserveFrom()
    const cut = setTimeout(() => running.abandonAttempts(), Math.max(0, until - Date.now()))
    try {
      await handBack([...(await queue.halt()), ...running.takeParked()])
      // A claim the scheduler was making meanwhile lands in the queue, which drain() returns.
      await Promise.all([running.planner.idle(), running.scheduler.idle(), searchIndex.stop(), expiryStopped])
      await handBack(await queue.drain())
    } finally {
      clearTimeout(cut)
      running.close()
    }
  }
  let stopping: Promise<void> | null = null
  const stopOnce = (): Promise<void> => (stopping ??= stop().catch((error: unknown) => app.log.error({ err: error }, 'the delivery workers did not stop cleanly')))
  // Started with the stop, not awaited: it runs beside the drain of HTTP connections.
  app.addHook('preClose', async () => void stopOnce())
  app.addHook('onClose', stopOnce)
}

export default fp(workersPlugin, { name: 'workers', dependencies: ['db', 'redis', 'shutdown'] })
