// Prometheus metrics at GET /metrics (prom-client, one registry per app). Counters are fed from
// what already exists: Fastify's onResponse hook, the domain event bus, the broker's entry
// listeners and the delivery engine's outcome callback; gauges are read when scraped (open
// sockets, pg pool, outbox backlog and delivery queue from PostgreSQL).
//
// Access: with METRICS_TOKEN set, `Authorization: Bearer <METRICS_TOKEN>`; unset, only clients on
// the loopback interface (a scraper on the same host or in the same pod). Others get 401.
import { timingSafeEqual, createHash } from 'node:crypto'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import { AppError } from '../lib/errors.ts'
import { backlog as readBacklog, type Backlog } from '../workers/repo.ts'

declare module 'fastify' {
  interface FastifyInstance {
    metrics: Metrics
  }
}

export interface Metrics {
  registry: Registry
  deliveries: Counter<'kind' | 'outcome'>
}

const digest = (s: string): Buffer => createHash('sha256').update(s).digest()

function isLoopback(ip: string): boolean {
  return ip === '::1' || ip.startsWith('127.') || ip.startsWith('::ffff:127.')
}

function authorised(request: FastifyRequest, token: string | undefined): boolean {
  if (!token) return isLoopback(request.socket.remoteAddress ?? request.ip)
  const header = request.headers.authorization ?? ''
  const given = header.startsWith('Bearer ') ? header.slice(7) : ''
  return timingSafeEqual(digest(given), digest(token))
}

async function metricsPlugin(app: FastifyInstance): Promise<void> {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry, prefix: 'ams_process_' })

  const httpDuration = new Histogram({
    name: 'ams_http_request_duration_seconds',
    help: 'HTTP requests by route (the route pattern; "unmatched" for unknown routes), method and status',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  })
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched'
    httpDuration.observe({ method: request.method, route, status_code: String(reply.statusCode) }, reply.elapsedTime / 1000)
    done()
  })

  const messages = new Counter({ name: 'ams_messages_created_total', help: 'Messages created through this instance', registers: [registry] })
  const events = new Counter({
    name: 'ams_events_committed_total',
    help: 'Domain events committed through this instance, by type',
    labelNames: ['type'] as const,
    registers: [registry],
  })
  app.events.subscribe((committed) => {
    for (const event of committed) {
      events.inc({ type: event.type })
      if (event.type === 'message.created') messages.inc()
    }
  })

  const fannedOut = new Counter({
    name: 'ams_events_fanned_out_total',
    help: 'Events this instance received from the broker and handed to its WebSocket hub',
    registers: [registry],
  })
  const brokerLag = new Histogram({
    name: 'ams_broker_lag_seconds',
    help: "Time from an event's commit to its arrival at this instance through the broker",
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  })
  const deliveries = new Counter({
    name: 'ams_deliveries_total',
    help: 'Webhook and integration delivery attempts made by this instance, by outcome (delivered, failed, unsendable)',
    labelNames: ['kind', 'outcome'] as const,
    registers: [registry],
  })

  new Gauge({
    name: 'ams_websocket_connections',
    help: 'Open WebSocket connections on this instance',
    registers: [registry],
    collect() {
      this.set(app.hasDecorator('realtime') ? app.realtime.hub.size : 0)
    },
  })
  new Gauge({
    name: 'ams_pg_pool_connections',
    help: 'PostgreSQL pool of this instance: connections by state (total, idle, waiting clients)',
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      const { pool } = app.db
      this.set({ state: 'total' }, pool.totalCount)
      this.set({ state: 'idle' }, pool.idleCount)
      this.set({ state: 'in_use' }, pool.totalCount - pool.idleCount)
      this.set({ state: 'waiting' }, pool.waitingCount)
    },
  })
  new Gauge({
    name: 'ams_pg_pool_max',
    help: 'Largest size of the PostgreSQL pool (DATABASE_POOL_SIZE)',
    registers: [registry],
    collect() {
      this.set(app.config.databasePoolSize)
    },
  })
  // Workspace-wide backlogs, read from PostgreSQL when scraped (partial indexes keep them cheap).
  const backlog = async (): Promise<Backlog | null> => {
    try {
      return await readBacklog(app.db.pool)
    } catch {
      return null // the database is down: these gauges are left out of this scrape
    }
  }
  let pendingBacklog: ReturnType<typeof backlog> | null = null
  const sharedBacklog = (): ReturnType<typeof backlog> => (pendingBacklog ??= backlog().finally(() => (pendingBacklog = null)))
  new Gauge({
    name: 'ams_outbox_backlog',
    help: 'Outbox events not yet published to the broker, or not yet planned into deliveries (whole workspace)',
    labelNames: ['stage'] as const,
    registers: [registry],
    async collect() {
      const b = await sharedBacklog()
      if (!b) return
      this.set({ stage: 'unpublished' }, b.unpublished)
      this.set({ stage: 'unplanned' }, b.unplanned)
    },
  })
  new Gauge({
    name: 'ams_delivery_queue_depth',
    help: 'Pending webhook and integration deliveries (whole workspace): due now, or waiting for a retry time',
    labelNames: ['state'] as const,
    registers: [registry],
    async collect() {
      const b = await sharedBacklog()
      if (!b) return
      this.set({ state: 'due' }, b.due)
      this.set({ state: 'scheduled' }, b.scheduled)
    },
  })

  app.decorate('metrics', { registry, deliveries })

  app.addHook('onReady', async () => {
    if (app.hasDecorator('realtime')) {
      app.realtime.broker.onEntries((entries) => {
        fannedOut.inc(entries.length)
        const now = Date.now()
        for (const { event } of entries) {
          const lag = (now - Date.parse(event.occurredAt)) / 1000
          if (lag >= 0) brokerLag.observe(lag)
        }
      })
    }
    if (app.hasDecorator('deliveries') && app.deliveries) {
      app.deliveries.onOutcome = (kind, outcome) => deliveries.inc({ kind, outcome })
    }
  })

  app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
    if (!authorised(request, app.config.metricsToken)) {
      throw new AppError('UNAUTHORIZED', app.config.metricsToken ? 'missing or invalid metrics token' : 'metrics are served to loopback clients only unless METRICS_TOKEN is set')
    }
    reply.header('content-type', registry.contentType)
    return registry.metrics()
  })
}

export default fp(metricsPlugin, { name: 'metrics', dependencies: ['db'] })
