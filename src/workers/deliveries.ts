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
import { ScanFloor } from '../events/outbox-floor.ts'
import { outboxHighWater } from '../events/repo.ts'
import { memberIds } from '../modules/channels/access.ts'
import { inboxItemsOf } from '../modules/inbox/items.ts'
import { deliveryHeaders } from '../lib/signing.ts'
import type { AddressPolicy } from '../lib/ssrf.ts'
import { filteredOut, ONLY_VALUES, type Only } from '../events/filter.ts'
import type { DomainEvent, PublishedMarks } from '../events/types.ts'
import { integrationBody, webhookBody } from './payloads.ts'
import { EndpointGate, type EndpointLimits } from './endpoints.ts'
import type { DeliveryQueue } from './queue.ts'
import * as repo from './repo.ts'
import { DEFAULT_RETRY_SCHEDULE, nextAttemptAt } from './retry.ts'
import { deliveryAgents, send, type DeliveryAgents } from './sender.ts'

const PLAN_BATCH = 200
// Under a stream of posts the planner runs at most every 50 ms (each run is one statement for the
// events it has nothing to do for, and a five-statement transaction when some are left); a
// webhook waits at most that much longer.
const PLAN_MIN_GAP_MS = 50
const MAX_RESPONSE_BYTES = 64 * 1024
// Deliveries an endpoint at its limit may have waiting in memory, per slot of its limit.
const PARKED_PER_SLOT = 8
// A delivery whose attempt failed for a reason of ours (not the receiver's) is tried again after this.
const RETRY_AFTER_ERROR_MS = 1_000

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

/**
 * The agents a message.mentioned event notifies (docs/decisions.md, "Mentions"), or the agent a
 * message.stop_requested is for (issue 25); null for other events.
 */
function mentionedAgents(event: DomainEvent): string[] | null {
  if (event.type === 'message.stop_requested') return [event.payload.author_id]
  return event.type === 'message.mentioned' ? event.payload.mentioned_agent_ids : null
}

/** The author of a message event (created or updated); null for other events. */
function messageAuthor(event: DomainEvent): { id: string; type: string } | null {
  if (event.type !== 'message.created' && event.type !== 'message.updated') return null
  const { message } = event.payload
  return { id: message.author_id, type: message.author_type }
}

/** A stored `only` as a filter value (src/events/filter.ts). */
const onlyFilter = (value: string | null): Only | null => (ONLY_VALUES.includes(value as Only) ? (value as Only) : null)

/**
 * Whether the event is addressed to an agent the integration acts for (any agent when it acts for
 * all) that is a member of the event's channel now (an agent that left is not addressed there).
 */
function addressedToAgentOf(i: repo.IntegrationTarget, event: DomainEvent, agents: ReadonlySet<string>, audience: ReadonlySet<string>): boolean {
  const ids = Object.keys(event.addressed ?? {}).filter((id) => audience.has(id))
  return i.allAgents ? ids.some((id) => agents.has(id)) : ids.some((id) => i.agentIds.includes(id))
}

export interface EngineOptions {
  policy: AddressPolicy
  schedule: number[]
  timeoutMs: number
  leaseMs: number
  disable: repo.DisableRule
  endpoints: EndpointLimits
}

export class DeliveryEngine {
  readonly planner: Kicker
  readonly scheduler: Kicker
  /** Set when the real-time relay runs in this process: planning then marks its events too. */
  publishedMarks: PublishedMarks | null = null
  /** Told the members who got new inbox items (src/modules/inbox/bell.ts). */
  inboxBell: { ring(memberIds: string[]): void } | null = null
  /** Told each attempt's outcome (src/plugins/metrics.ts counts them). */
  onOutcome: ((kind: 'webhook' | 'integration', outcome: 'delivered' | 'failed' | 'unsendable') => void) | null = null
  private stopped = false
  private readonly abandoning = new AbortController()
  private readonly agents: DeliveryAgents
  /** Per-endpoint concurrency limits and circuit breakers of this instance. */
  readonly endpoints: EndpointGate
  private readonly parked = new Map<string, repo.ClaimedDelivery[]>()
  private readonly parkedIds = new Set<string>()
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
    this.endpoints = new EndpointGate(options.endpoints)
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
      endpoints: { concurrency: c.webhookEndpointConcurrency, failureThreshold: c.webhookBreakerFailures, cooldownMs: c.webhookBreakerCooldownMs },
    }
  }

  /** Graceful stop: no more planning, claiming or new attempts; attempts in flight go on. */
  stop(): void {
    this.stopped = true
  }

  /** Cuts the attempts still in flight short; each hands its delivery back (repo.abandonAttempt). */
  abandonAttempts(): void {
    this.abandoning.abort()
  }

  /** Closes kept-alive connections (after the queue has stopped). */
  close(): void {
    this.agents.destroy()
  }

  /** Plans every unplanned outbox event, batch after batch; kicks the scheduler if it created work. */
  async planAll(): Promise<void> {
    const run = await this.unplanned.begin()
    let created = 0
    const marks = this.publishedMarks
    // First the events planning has nothing to do for, in one statement each batch; planBatch's
    // transaction runs only when some are left.
    for (;;) {
      if (this.stopped) return
      const idle = await repo.markIdleEvents(this.app.db.pool, PLAN_BATCH, run.fromId, marks?.pending() ?? [])
      if (idle.markedPublished.length) marks?.marked(idle.markedPublished)
      if (idle.rest) break
      if (idle.idle < PLAN_BATCH) {
        this.unplanned.complete(run)
        return
      }
    }
    for (;;) {
      if (this.stopped) break
      const { events, deliveries, markedPublished, inboxMembers } = await repo.planBatch(
        this.app.db.pool,
        PLAN_BATCH,
        run.fromId,
        (ctx) => this.plan(ctx),
        () => marks?.pending() ?? [],
        inboxItemsOf,
      )
      if (markedPublished.length) marks?.marked(markedPublished)
      // Committed: wake the inbox's waiting requests of these members, on every instance.
      if (inboxMembers.length) this.inboxBell?.ring(inboxMembers)
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
        m = memberIds(this.app.ctx, channelId).then((ids) => new Set(ids))
        members.set(channelId, m)
      }
      return m
    }
    const audienceOf = async (event: DomainEvent): Promise<Set<string>> => {
      const set = event.channelId ? new Set(await membersOf(event.channelId)) : new Set<string>()
      for (const id of event.audience ?? []) set.add(id)
      return set
    }

    for (const event of ctx.events) {
      // A subscription starts at its creation: an event that occurred earlier (but is planned
      // after it, a few milliseconds later) is not sent to it.
      const occurred = Date.parse(event.occurredAt)
      const since = (target: { createdAt: Date }): boolean => target.createdAt.getTime() <= occurred
      const webhooks = ctx.webhooks.filter((w) => w.events.includes(event.type) && since(w))
      const integrations = ctx.integrations.filter((i) => i.events.includes(event.type) && since(i))
      if (!webhooks.length && !integrations.length) continue
      const audience = event.channelId || event.audience?.length ? await audienceOf(event) : new Set<string>()

      // Agent webhooks: events of channels the agent belongs to (or was just removed from),
      // without the agent's own messages when it opted out (docs/loops.md).
      const author = messageAuthor(event)
      const mentioned = mentionedAgents(event)
      for (const w of webhooks) {
        if (!audience.has(w.agentId)) continue
        if (mentioned && !mentioned.includes(w.agentId)) continue
        if (filteredOut({ only: onlyFilter(w.only), skipsOwnMessages: !w.includeOwnMessages }, w.agentId, event)) continue
        out.push({ webhookId: w.id, integrationId: null, eventId: event.id, eventType: event.type, body: webhookBody(w.id, w.agentId, event) })
      }

      // Integrations: every channel of the workspace; a DM only when one of its agents is in it
      // (any agent for an integration created with no agent list: it may act for all of them).
      const dm = event.channelId !== null && ctx.dmChannelIds.has(event.channelId) ? event.channelId : null
      const seesDm = (i: repo.IntegrationTarget): boolean => (i.allAgents ? ctx.agentDmChannelIds.has(dm!) : i.agentIds.some((a) => audience.has(a)))
      // An integration that opted out of its own messages skips those of the agents it acts for.
      const ownOf = (i: repo.IntegrationTarget): boolean => author !== null && author.type === 'AGENT' && (i.allAgents || i.agentIds.includes(author.id))
      for (const i of integrations) {
        if (dm && !seesDm(i)) continue
        if (mentioned && !(i.allAgents ? mentioned.length > 0 : i.agentIds.some((a) => mentioned.includes(a)))) continue
        if (!i.includeOwnMessages && ownOf(i)) continue
        if (i.only === 'mentions' && event.type !== 'message.mentioned') continue
        if (i.only === 'addressed' && !addressedToAgentOf(i, event, ctx.addressedAgentIds, audience)) continue
        const body = integrationBody(i.id, event)
        if (body) out.push({ webhookId: null, integrationId: i.id, eventId: event.id, eventType: event.type, body })
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

  /**
   * One attempt of one delivery (the queue's handler), if its endpoint admits it now
   * (src/workers/endpoints.ts); otherwise the delivery goes back to PostgreSQL for a little later
   * and the shared slot is free at once.
   */
  readonly attempt = async (item: repo.ClaimedDelivery): Promise<void> => {
    if (this.stopped) {
      await repo.releaseClaims(this.app.db.pool, [item]) // stopping: hand it back
      return
    }
    const endpoint = item.endpoint
    if (!endpoint) {
      await this.attemptOrHandBack(item)
      return
    }
    let next: repo.ClaimedDelivery | undefined = item
    // After an attempt, the same shared slot runs the next delivery parked for this endpoint, so
    // a busy endpoint's backlog drains at its own pace without holding other slots.
    while (next && !this.stopped) {
      const admission = this.endpoints.admit(endpoint)
      if (!admission.admitted) {
        await this.holdBack(endpoint, next, admission.reason, admission.retryInMs)
        return
      }
      let outcome: boolean | null = null
      try {
        // The breaker hears the result as soon as the receiver answers, before the outcome is
        // written: once written, a retry due at once can be claimed again, and it must meet an
        // open breaker, not the count of failures before this one.
        outcome = await this.attemptOrHandBack(next, admission.done)
      } finally {
        admission.done(outcome) // no-op when already told
      }
      next = this.parked.get(endpoint)?.shift()
      if (next) this.parkedIds.delete(next.id)
    }
    if (next) await repo.releaseClaims(this.app.db.pool, [next]) // stopping: hand it back
  }

  /**
   * The attempt, or, when it fails for a reason of ours (a statement that could not get a pooled
   * connection on a loaded machine), the delivery handed back to be tried again shortly with no
   * attempt counted, instead of waiting out its claim (a minute) with the deliveries parked
   * behind it. Never throws, so the slot goes on to the endpoint's parked deliveries.
   */
  private async attemptOrHandBack(item: repo.ClaimedDelivery, answered?: (success: boolean) => void): Promise<boolean | null> {
    try {
      return await this.attemptAdmitted(item, answered)
    } catch (error) {
      this.app.log.error({ err: error, deliveryId: item.id }, 'delivery attempt failed unexpectedly; it is tried again shortly')
      // Unchanged if the attempt had begun (its count moved): then the attempt's own lease holds.
      await repo.deferDelivery(this.app.db.pool, item, RETRY_AFTER_ERROR_MS).catch(() => {})
      return null
    }
  }

  /**
   * A delivery whose endpoint is at its limit waits in memory (a few per endpoint, no slot held)
   * for the endpoint's next free slot; beyond that, or when the endpoint's breaker is open, it
   * goes back to PostgreSQL for later, with no attempt counted.
   */
  private async holdBack(endpoint: string, item: repo.ClaimedDelivery, reason: 'busy' | 'open', retryInMs: number): Promise<void> {
    if (this.parkedIds.has(item.id)) return
    const queue = this.parked.get(endpoint) ?? []
    if (reason === 'busy' && queue.length < this.options.endpoints.concurrency * PARKED_PER_SLOT) {
      queue.push(item)
      this.parked.set(endpoint, queue)
      this.parkedIds.add(item.id)
      return
    }
    const pool = this.app.db.pool
    await repo.deferDelivery(pool, item, retryInMs)
    if (reason === 'open' && queue.length) {
      this.parked.delete(endpoint)
      for (const parked of queue) {
        this.parkedIds.delete(parked.id)
        await repo.deferDelivery(pool, parked, retryInMs)
      }
    }
  }

  /** Deliveries parked in memory (graceful stop: their claims are released). */
  takeParked(): repo.ClaimedDelivery[] {
    const all = [...this.parked.values()].flat()
    this.parked.clear()
    this.parkedIds.clear()
    return all
  }

  /**
   * Makes the attempt; returns whether it succeeded, or null when none was made. `answered`
   * hears the result before it is recorded.
   */
  private async attemptAdmitted(item: repo.ClaimedDelivery, answered?: (success: boolean) => void): Promise<boolean | null> {
    const { pool } = this.app.db
    const row = await repo.beginAttempt(pool, item.id, item.attempts, this.options.leaseMs)
    if (!row) return null // stale queue item: that attempt was made, or the delivery completed or was deleted
    const kind = row.webhookId ? 'webhook' : 'integration'
    if (!row.url || !row.secret || !row.active) this.onOutcome?.(kind, 'unsendable')
    if (!row.url || !row.secret) {
      await repo.failUnsendable(pool, row, `not sent: the ${kind} no longer exists`)
      return null
    }
    if (!row.active) {
      await repo.failUnsendable(pool, row, `not sent: the ${kind} is disabled${row.disabledReason ? ` (${row.disabledReason})` : ''}`)
      return null
    }

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
      signal: this.abandoning.signal,
    })
    if (result.abandoned) {
      await repo.abandonAttempt(pool, row)
      return null
    }
    answered?.(result.ok)
    const outcome = { statusCode: result.statusCode, error: result.error, durationMs: result.durationMs }
    this.onOutcome?.(kind, result.ok ? 'delivered' : 'failed')
    if (result.ok) {
      await repo.recordSuccess(pool, row, outcome)
      return true
    }
    const retryAt = nextAttemptAt(row.attempt, this.options.schedule)
    const disabled = await repo.recordFailure(pool, row, outcome, retryAt, this.options.disable)
    if (disabled) this.app.log.warn({ [`${kind}Id`]: row.webhookId ?? row.integrationId }, `${kind} disabled after failing deliveries`)
    return false
  }
}
