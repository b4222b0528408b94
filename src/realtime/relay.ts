// Outbox relay: moves committed domain events from the outbox_events table to the broker.
// Fast path: the instance that committed publishes at once (bus subscriber) and the rows are
// marked published_at soon after: by the delivery planner, which updates every outbox row anyway
// and sets both marks in one row update (src/workers/repo.ts planBatch), or, for what is still
// waiting when the relay's timer fires (MARK_DELAY_MS after the first unmarked event), by one
// batched UPDATE of the relay. Safety net: a sweeper republishes rows still unpublished after
// a short delay (Redis was down, the process died between commit and publish), claiming them with
// FOR UPDATE SKIP LOCKED so two instances do not both publish the same rows. It scans from a floor
// a few seconds behind the newest event, and the whole outbox every OUTBOX_FULL_SCAN_MS
// (src/events/outbox-floor.ts). A row may reach the log twice (fast path slower than the delay,
// crash between publish and mark): events carry their id and clients de-duplicate on it.
import type { FastifyBaseLogger } from 'fastify'
import type pg from 'pg'
import { ScanFloor } from '../events/outbox-floor.ts'
import { outboxHighWater } from '../events/repo.ts'
import type { DomainEvent, PublishedMarks } from '../events/types.ts'
import type { Broker } from './broker.ts'
import { markPublished, pruneOutbox, relayUnpublished } from './repo.ts'

// Long enough for the planner (runs within ~50 ms of a commit) to set the mark first; well below
// OUTBOX_RELAY_DELAY_MS, after which the sweeper would publish an unmarked event again.
const MARK_DELAY_MS = 250
const MARK_BATCH = 1_000
const SWEEP_BATCH = 500
const PRUNE_EVERY_MS = 60_000
const PRUNE_BATCH = 10_000

export interface RelayOptions {
  sweepIntervalMs: number
  republishAfterMs: number
  /** Rows relayed and planned are deleted once older than this. */
  retentionMs: number
  /** The sweeper's scan floor: its lag beyond republishAfterMs, and how often it scans it all. */
  scanLagMs: number
  fullScanMs: number
}

export class OutboxRelay implements PublishedMarks {
  private pendingMarks = new Set<string>()
  private markTimer: NodeJS.Timeout | null = null
  private sweepTimer: NodeJS.Timeout | null = null
  private sweeping: Promise<unknown> | null = null
  private brokerDown = false
  private stopped = true
  private lastPrune = Date.now()
  /** Where the sweeper's scan for unpublished events starts. */
  readonly unpublished: ScanFloor

  constructor(
    private readonly pool: pg.Pool,
    private readonly broker: Broker,
    private readonly log: FastifyBaseLogger,
    private readonly options: RelayOptions,
  ) {
    // An event is swept once it is republishAfterMs old, so the floor waits that much longer.
    this.unpublished = new ScanFloor(() => outboxHighWater(pool), {
      lagMs: options.republishAfterMs + options.scanLagMs,
      fullPassMs: options.fullScanMs,
    })
  }

  /** Bus subscriber: events that just committed in this process. */
  readonly onCommitted = (events: DomainEvent[]): void => {
    this.broker.publish(events).then(
      () => {
        this.brokerUp()
        this.mark(events.map((e) => e.id))
      },
      (error: unknown) => {
        // The rows stay unpublished; the sweeper relays them once the broker is back.
        if (!this.brokerDown) this.log.warn({ err: error }, 'event broker unavailable; events stay in the outbox until it is back')
        this.brokerDown = true
      },
    )
  }

  private brokerUp(): void {
    if (this.brokerDown) this.log.info('event broker available again')
    this.brokerDown = false
  }

  private mark(ids: string[]): void {
    for (const id of ids) this.pendingMarks.add(id)
    if (this.pendingMarks.size >= MARK_BATCH) void this.flushMarks()
    else this.markTimer ??= setTimeout(() => void this.flushMarks(), MARK_DELAY_MS)
  }

  pending(): string[] {
    return [...this.pendingMarks]
  }

  marked(ids: string[]): void {
    for (const id of ids) this.pendingMarks.delete(id)
  }

  private async flushMarks(): Promise<void> {
    if (this.markTimer) clearTimeout(this.markTimer)
    this.markTimer = null
    const ids = [...this.pendingMarks]
    this.pendingMarks.clear()
    // If this fails the sweeper publishes the rows again; clients de-duplicate by event id.
    await markPublished(this.pool, ids).catch((error: unknown) => this.log.warn({ err: error }, 'could not mark outbox events published'))
  }

  start(): void {
    this.stopped = false
    const tick = (): void => {
      this.sweeping = this.sweep()
        .then(() => (Date.now() - this.lastPrune >= PRUNE_EVERY_MS ? this.prune() : 0))
        .finally(() => {
          this.sweeping = null
          if (!this.stopped) this.sweepTimer = setTimeout(tick, this.options.sweepIntervalMs)
        })
    }
    this.sweepTimer = setTimeout(tick, this.options.sweepIntervalMs)
  }

  /** Relays every event left unpublished for longer than the delay; returns how many. */
  async sweep(): Promise<number> {
    let total = 0
    try {
      const run = await this.unpublished.begin()
      for (;;) {
        const n = await relayUnpublished(this.pool, this.options.republishAfterMs, SWEEP_BATCH, run.fromId, (events) => this.broker.publish(events))
        total += n
        if (n) this.brokerUp()
        if (n < SWEEP_BATCH) this.unpublished.complete(run)
        if (n < SWEEP_BATCH || this.stopped) break
      }
      if (total) this.log.info({ events: total }, 'relayed outbox events left unpublished')
    } catch (error) {
      if (!this.brokerDown) this.log.warn({ err: error }, 'outbox sweep failed; retrying')
      this.brokerDown = true
    }
    return total
  }

  /** Deletes the rows that have done their work (see OUTBOX_RETENTION_MS); returns how many. */
  async prune(): Promise<number> {
    this.lastPrune = Date.now()
    try {
      let total = 0
      for (;;) {
        const n = await pruneOutbox(this.pool, this.options.retentionMs, PRUNE_BATCH)
        total += n
        if (n < PRUNE_BATCH || this.stopped) return total
      }
    } catch (error) {
      this.log.warn({ err: error }, 'outbox pruning failed; retrying later')
      return 0
    }
  }

  async stop(): Promise<void> {
    this.stopped = true
    if (this.sweepTimer) clearTimeout(this.sweepTimer)
    await this.sweeping
    await this.flushMarks()
  }
}
