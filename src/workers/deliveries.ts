// The delivery engine: plans deliveries from the outbox, claims due ones, makes the attempts.
//
// 1. Planner: claims unplanned outbox events and, in the same transaction, inserts one delivery
//    per (subscribed endpoint, event) — unique per pair, so planning twice creates nothing new.
//    Kicked by the event bus right after a commit (low latency) and by a periodic sweep (events
//    committed by a process that died before its kick, or by another instance).
// 2. Scheduler: claims pending deliveries that are due (new, retry time reached, or a claim that
//    expired) and hands them to the queue (in process, or the shared Redis stream).
// 3. Attempt: compare-and-set on `attempts`, sign, POST, record the outcome, schedule the retry
//    or fail, and disable an endpoint that keeps failing. Never on a request's path.
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import { outboxHighWater, ScanFloor } from '../events/outbox-floor.ts'
import { memberIds } from '../modules/channels/access.ts'
import { deliveryHeaders } from '../lib/signing.ts'
import type { AddressPolicy } from '../lib/ssrf.ts'
import { integrationBody, webhookBody, type OutboxEventRecord } from './payloads.ts'
import type { DeliveryQueue } from './queue.ts'
import * as repo from './repo.ts'
import { DEFAULT_RETRY_SCHEDULE, nextAttemptAt } from './retry.ts'
import { deliveryAgents, send, type DeliveryAgents } from './sender.ts'

const PLAN_BATCH = 200
// Under a stream of posts the planner runs at most every 50 ms (each run is a five-statement
// transaction); a webhook waits at most that much longer.
const PLAN_MIN_GAP_MS = 50
const MAX_RESPONSE_BYTES = 64 * 1024

/**
 * Runs an async job with at most one run at a time; a kick during a run asks for one more. With
 * `minGapMs`, back-to-back runs start at least that far apart, so a stream of kicks (one per
 * commit) becomes a few batched runs instead of one run per commit; a kick after a quiet spell
 * still runs at once.
 */
export class Kicker {
  private running: Promise<void> | null = null
  private again = false

  constructor(
    private readonly job: () => Promise<void>,
    private readonly log: FastifyBaseLogger,
    private readonly what: string,
    private readonly minGapMs = 0,
  ) {}

  kick(): Promise<void> {
    if (this.running) {
      this.again = true
      return this.running
    }
    this.running = (async () => {
      do {
        this.again = false
        const started = Date.now()
        try {
          await this.job()
        } catch (error) {
          this.log.warn({ err: error }, `${this.what} failed; retrying on the next tick`)
        }
        const wait = this.minGapMs - (Date.now() - started)
        if (this.again && wait > 0) await sleep(wait)
      } while (this.again)
    })().finally(() => {
      this.running = null
    })
    return this.running
  }

  idle(): Promise<void> {
    return this.running ?? Promise.resolve()
  }
}

export interface EngineOptions {
  policy: AddressPolicy
  schedule: number[]
  timeoutMs: number
  leaseMs: number
  disable: repo.DisableRule
}

/** Events relayed to the broker but not yet marked so (the outbox relay, src/realtime/relay.ts). */
export interface PublishedMarks {
  /** Ids waiting for their published mark. */
  pending(): string[]
  /** These ids were marked (by the planner's update). */
  marked(ids: string[]): void
}

export class DeliveryEngine {
  readonly planner: Kicker
  readonly scheduler: Kicker
  /** Set when the real-time relay runs in this process: planning then marks its events too. */
  publishedMarks: PublishedMarks | null = null
  private stopped = false
  private readonly agents: DeliveryAgents
  /** Where the planner's scan for unplanned events starts. */
  readonly unplanned: ScanFloor

  constructor(
    private readonly app: FastifyInstance,
    private readonly queue: DeliveryQueue,
    private readonly options: EngineOptions,
  ) {
    this.planner = new Kicker(() => this.planAll(), app.log, 'delivery planning', PLAN_MIN_GAP_MS)
    this.scheduler = new Kicker(() => this.scheduleDue(), app.log, 'delivery scheduling')
    this.agents = deliveryAgents(options.policy, app.config.webhookConcurrency)
    this.unplanned = new ScanFloor(() => outboxHighWater(app.db.pool), {
      lagMs: app.config.outboxScanLagMs,
      fullPassMs: app.config.outboxFullScanMs,
    })
  }

  static options(app: FastifyInstance): EngineOptions {
    const c = app.config
    return {
      policy: { allowPrivate: c.webhookAllowPrivate, allowHosts: c.webhookAllowHosts },
      schedule: c.webhookRetrySchedule ?? DEFAULT_RETRY_SCHEDULE,
      timeoutMs: c.webhookTimeoutMs,
      // A claim must outlive the longest attempt, or a slow attempt would be taken over.
      leaseMs: Math.max(c.webhookClaimTimeoutMs, c.webhookTimeoutMs + 1_000),
      disable: { afterSeconds: c.webhookDisableAfterSeconds, minFailures: c.webhookDisableMinFailures },
    }
  }

  stop(): void {
    this.stopped = true
  }

  /** Closes kept-alive connections (after the queue has stopped). */
  close(): void {
    this.agents.destroy()
  }

  /** Plans every unplanned outbox event, batch after batch; kicks the scheduler if it created work. */
  async planAll(): Promise<void> {
    const run = await this.unplanned.begin()
    let created = 0
    for (;;) {
      if (this.stopped) break
      const marks = this.publishedMarks
      const { events, deliveries, markedPublished } = await repo.planBatch(
        this.app.db.pool,
        PLAN_BATCH,
        run.fromId,
        (ctx) => this.plan(ctx),
        () => marks?.pending() ?? [],
      )
      if (markedPublished.length) marks?.marked(markedPublished)
      created += deliveries
      if (events < PLAN_BATCH) {
        this.unplanned.complete(run)
        break
      }
    }
    if (created) void this.scheduler.kick()
  }

  private async plan(ctx: repo.PlanContext): Promise<repo.NewDelivery[]> {
    const out: repo.NewDelivery[] = []
    const members = new Map<string, Promise<Set<string>>>()
    const membersOf = (channelId: string): Promise<Set<string>> => {
      let m = members.get(channelId)
      if (!m) {
        m = memberIds(this.app, channelId).then((ids) => new Set(ids))
        members.set(channelId, m)
      }
      return m
    }
    const audienceOf = async (event: OutboxEventRecord): Promise<Set<string>> => {
      const set = event.channelId ? new Set(await membersOf(event.channelId)) : new Set<string>()
      for (const id of event.audience) set.add(id)
      return set
    }

    for (const event of ctx.events) {
      const webhooks = ctx.webhooks.filter((w) => w.events.includes(event.type))
      const integrations = ctx.integrations.filter((i) => i.events.includes(event.type))
      if (!webhooks.length && !integrations.length) continue
      const audience = event.channelId || event.audience.length ? await audienceOf(event) : new Set<string>()

      // Agent webhooks: events of channels the agent belongs to (or was just removed from).
      for (const w of webhooks) {
        if (!audience.has(w.agentId)) continue
        out.push({ webhookId: w.id, integrationId: null, eventId: event.eventId, eventType: event.type, body: webhookBody(w.id, w.agentId, event) })
      }

      // Integrations: every channel of the workspace; a DM only when one of its agents is in it
      // (any agent for an integration created with no agent list: it may act for all of them).
      const dm = event.channelId !== null && ctx.dmChannelIds.has(event.channelId) ? event.channelId : null
      const seesDm = (i: repo.IntegrationTarget): boolean =>
        i.allAgents ? ctx.agentDmChannelIds.has(dm!) : i.agentIds.some((a) => audience.has(a))
      for (const i of integrations) {
        if (dm && !seesDm(i)) continue
        const body = integrationBody(i.id, event)
        if (body) out.push({ webhookId: null, integrationId: i.id, eventId: event.eventId, eventType: event.type, body })
      }
    }
    return out
  }

  /** Claims due deliveries up to the queue's capacity and enqueues them. */
  async scheduleDue(): Promise<void> {
    for (;;) {
      if (this.stopped) return
      const limit = await this.queue.capacity()
      if (limit <= 0) return
      const claimed = await repo.claimDue(this.app.db.pool, limit, this.options.leaseMs)
      if (claimed.length) await this.queue.enqueue(claimed)
      if (claimed.length < limit) return
    }
  }

  /** One attempt of one delivery (the queue's handler). */
  readonly attempt = async (item: repo.ClaimedDelivery): Promise<void> => {
    const { pool } = this.app.db
    const row = await repo.beginAttempt(pool, item.id, item.attempts, this.options.leaseMs)
    if (!row) return // stale queue item: that attempt was made, or the delivery completed or was deleted
    const kind = row.webhookId ? 'webhook' : 'integration'
    if (!row.url || !row.secret) return repo.failUnsendable(pool, row, `not sent: the ${kind} no longer exists`)
    if (!row.active) return repo.failUnsendable(pool, row, `not sent: the ${kind} is disabled${row.disabledReason ? ` (${row.disabledReason})` : ''}`)

    const headers = deliveryHeaders({
      kind,
      secret: row.secret,
      body: row.body,
      deliveryId: row.id,
      eventId: row.eventId,
      eventType: row.eventType,
      targetId: (row.webhookId ?? row.integrationId)!,
      attempt: row.attempt,
      timestamp: Math.floor(Date.now() / 1000),
    })
    const result = await send(row.url, headers, row.body, {
      policy: this.options.policy,
      agents: this.agents,
      timeoutMs: this.options.timeoutMs,
      connectTimeoutMs: Math.min(this.options.timeoutMs, 5_000),
      maxResponseBytes: MAX_RESPONSE_BYTES,
    })
    const outcome = { statusCode: result.statusCode, error: result.error, durationMs: result.durationMs }
    if (result.ok) {
      await repo.recordSuccess(pool, row, outcome)
      return
    }
    const retryAt = nextAttemptAt(row.attempt, this.options.schedule)
    const disabled = await repo.recordFailure(pool, row, outcome, retryAt, this.options.disable)
    if (disabled) this.app.log.warn({ [`${kind}Id`]: row.webhookId ?? row.integrationId }, `${kind} disabled after failing deliveries`)
  }
}
