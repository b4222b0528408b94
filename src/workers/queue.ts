// Work distribution for delivery attempts. Queue items are only (delivery id, attempts seen when
// claimed); PostgreSQL stays the source of truth, so a lost item is recovered by the scheduler
// once its claim expires, and a duplicated one is harmless (the attempt compare-and-set).
//
// MemoryQueue: single node, one in-process worker pool.
// RedisQueue: a Redis Stream with one consumer group shared by every instance: XADD to enqueue,
// XREADGROUP to take work (each entry goes to one consumer), XACK + XDEL once the attempt is
// recorded, XAUTOCLAIM to take over entries left pending by a consumer that died.
//
// A graceful stop (src/workers/plugin.ts): halt() stops taking work and returns what was held
// but not started, at once; drain() waits for the attempts in flight.
import { randomUUID } from 'node:crypto'
import os from 'node:os'
import type { FastifyBaseLogger } from 'fastify'
import type { Redis } from 'ioredis'
import type { ClaimedDelivery } from './repo.ts'

export type QueueHandler = (item: ClaimedDelivery) => Promise<void>

export interface DeliveryQueue {
  enqueue(items: ClaimedDelivery[]): Promise<void>
  start(handler: QueueHandler): Promise<void>
  /**
   * Stops taking work, at once: returns the items this instance holds but did not start, whose
   * claims are then released (handed back); attempts in flight go on.
   */
  halt(): Promise<ClaimedDelivery[]>
  /** After halt(): resolves once no attempt runs, with whatever is still held (to hand back). */
  drain(): Promise<ClaimedDelivery[]>
  /** How many more items the scheduler should claim for this queue now. */
  capacity(): Promise<number>
}

export class MemoryQueue implements DeliveryQueue {
  private readonly waiting: ClaimedDelivery[] = []
  private readonly queued = new Set<string>()
  private readonly running = new Set<Promise<void>>()
  private handler: QueueHandler | null = null
  private stopped = false

  constructor(
    private readonly concurrency: number,
    private readonly log: FastifyBaseLogger,
    private readonly onIdleSlot: () => void,
  ) {}

  async enqueue(items: ClaimedDelivery[]): Promise<void> {
    for (const item of items) {
      if (this.queued.has(item.id)) continue
      this.queued.add(item.id)
      this.waiting.push(item)
    }
    this.pump()
  }

  async start(handler: QueueHandler): Promise<void> {
    this.handler = handler
    this.stopped = false
    this.pump()
  }

  async capacity(): Promise<number> {
    return Math.max(0, this.concurrency * 2 - this.waiting.length - this.running.size)
  }

  private pump(): void {
    const handler = this.handler
    if (!handler || this.stopped) return
    while (this.running.size < this.concurrency && this.waiting.length) {
      const item = this.waiting.shift()!
      this.queued.delete(item.id)
      const run: Promise<void> = handler(item)
        .catch((error: unknown) => this.log.error({ err: error, deliveryId: item.id }, 'delivery attempt failed unexpectedly'))
        .finally(() => {
          this.running.delete(run)
          this.pump()
          // Refill in batches (one claim query per `concurrency` attempts, not one per attempt).
          if (!this.stopped && this.waiting.length <= this.concurrency / 2) this.onIdleSlot()
        })
      this.running.add(run)
    }
  }

  async halt(): Promise<ClaimedDelivery[]> {
    this.stopped = true
    const left = this.waiting.splice(0)
    this.queued.clear()
    return left
  }

  async drain(): Promise<ClaimedDelivery[]> {
    await Promise.all([...this.running])
    return this.halt() // anything enqueued meanwhile
  }
}

const GROUP = 'delivery-workers'
const BLOCK_MS = 1_000
const CONSUMER_IDLE_MS = 60 * 60 * 1000
const CONSUMER_CLEANUP_EVERY_MS = 10 * 60 * 1000

type StreamEntry = [id: string, fields: string[] | null]

export class RedisQueue implements DeliveryQueue {
  readonly key: string
  readonly consumer = `${os.hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`
  private reader: Redis | null = null
  private readonly running = new Map<string, Promise<void>>()
  private handler: QueueHandler | null = null
  private stopped = true
  private loop: Promise<void> | null = null
  private reclaimTimer: NodeJS.Timeout | null = null
  private reclaiming: Promise<void> | null = null
  private wake: (() => void) | null = null
  private redisDown = false
  private lastCleanup = 0

  constructor(
    private readonly redis: Redis,
    private readonly duplicate: () => Redis,
    prefix: string,
    private readonly concurrency: number,
    /** Entries pending this long with their consumer are taken over (XAUTOCLAIM min-idle-time). */
    private readonly claimTimeoutMs: number,
    private readonly log: FastifyBaseLogger,
    private readonly onIdleSlot: () => void,
  ) {
    this.key = `${prefix}deliveries`
  }

  async enqueue(items: ClaimedDelivery[]): Promise<void> {
    if (!items.length) return
    const pipeline = this.redis.pipeline()
    for (const item of items) pipeline.xadd(this.key, '*', 'delivery_id', item.id, 'attempts', String(item.attempts), 'endpoint', item.endpoint ?? '')
    const results = await pipeline.exec()
    const failed = results?.find(([error]) => error)
    // Not thrown: the claims expire and the scheduler enqueues the deliveries again.
    if (failed) this.warn(failed[0], 'could not enqueue deliveries in Redis; they will be retried when their claim expires')
    else this.up()
  }

  /** Keeps the shared stream's backlog (entries not yet acknowledged) near a few rounds of work. */
  async capacity(): Promise<number> {
    const backlog = await this.redis.xlen(this.key).catch(() => Number.POSITIVE_INFINITY)
    return Math.max(0, this.concurrency * 4 - backlog)
  }

  async start(handler: QueueHandler): Promise<void> {
    this.handler = handler
    this.stopped = false
    await this.ensureGroup().catch((error: unknown) => this.warn(error, 'could not create the delivery consumer group yet'))
    this.reader = this.duplicate()
    if (this.reader.status !== 'ready') {
      const reader = this.reader
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 2_000) // not up yet: the loop retries
        reader.once('ready', () => {
          clearTimeout(timer)
          resolve()
        })
      })
    }
    this.loop = this.readLoop()
    const every = Math.max(250, Math.floor(this.claimTimeoutMs / 2))
    const tick = (): void => {
      this.reclaiming = this.reclaim().finally(() => {
        this.reclaiming = null
        if (!this.stopped) this.reclaimTimer = setTimeout(tick, every)
      })
    }
    this.reclaimTimer = setTimeout(tick, every)
  }

  private async ensureGroup(): Promise<void> {
    try {
      await this.redis.xgroup('CREATE', this.key, GROUP, '0', 'MKSTREAM')
    } catch (error) {
      if (!String((error as Error).message).includes('BUSYGROUP')) throw error
    }
  }

  private free(): number {
    return this.concurrency - this.running.size
  }

  private async readLoop(): Promise<void> {
    while (!this.stopped) {
      if (this.free() <= 0) {
        await new Promise<void>((resolve) => (this.wake = resolve))
        continue
      }
      try {
        const reply = await this.reader!.xreadgroup('GROUP', GROUP, this.consumer, 'COUNT', this.free(), 'BLOCK', BLOCK_MS, 'STREAMS', this.key, '>')
        this.up()
        for (const [, entries] of reply ?? []) for (const entry of entries) this.process(entry)
      } catch (error) {
        if (this.stopped) break
        if (String((error as Error).message).includes('NOGROUP')) await this.ensureGroup().catch(() => {})
        else this.warn(error, 'reading the delivery stream failed; retrying')
        await new Promise((resolve) => setTimeout(resolve, 500))
      }
    }
  }

  /** Takes over entries another consumer read but never acknowledged (it crashed or hung). */
  private async reclaim(): Promise<void> {
    if (this.free() <= 0) return
    try {
      const reply = (await this.redis.xautoclaim(this.key, GROUP, this.consumer, this.claimTimeoutMs, '0-0', 'COUNT', this.free())) as [string, StreamEntry[], string[]?]
      const entries = reply[1] ?? []
      if (entries.length) this.log.info({ entries: entries.length }, 'took over stalled delivery stream entries')
      for (const entry of entries) this.process(entry)
      await this.forgetDeadConsumers()
    } catch (error) {
      this.warn(error, 'reclaiming stalled delivery entries failed')
    }
  }

  /** Removes consumers of stopped instances (nothing pending, silent for an hour) from the group. */
  private async forgetDeadConsumers(): Promise<void> {
    const now = Date.now()
    if (now - this.lastCleanup < CONSUMER_CLEANUP_EVERY_MS) return
    this.lastCleanup = now
    const consumers = (await this.redis.xinfo('CONSUMERS', this.key, GROUP)) as (string | number)[][]
    for (const fields of consumers) {
      const info = new Map<string, string | number>()
      for (let i = 0; i + 1 < fields.length; i += 2) info.set(String(fields[i]), fields[i + 1]!)
      const name = String(info.get('name'))
      if (name !== this.consumer && Number(info.get('pending')) === 0 && Number(info.get('idle')) > CONSUMER_IDLE_MS) {
        await this.redis.xgroup('DELCONSUMER', this.key, GROUP, name)
      }
    }
  }

  private process([entryId, fields]: StreamEntry): void {
    if (this.running.has(entryId)) return
    const item = fields ? itemOf(fields) : null
    // Trimmed or deleted under us, or not an item: nothing to do.
    if (!item || !this.handler) {
      void this.ack(entryId)
      return
    }
    const run = this.handler(item)
      .then(
        () => this.ack(entryId),
        // Left pending: XAUTOCLAIM (here or elsewhere) takes it again after the claim timeout.
        (error: unknown) => this.log.error({ err: error, deliveryId: item.id }, 'delivery attempt failed unexpectedly'),
      )
      .finally(() => {
        this.running.delete(entryId)
        this.wake?.()
        this.wake = null
        if (!this.stopped && this.running.size <= this.concurrency / 2) this.onIdleSlot()
      })
    this.running.set(entryId, run)
  }

  private async ack(entryId: string): Promise<void> {
    await this.redis
      .multi()
      .xack(this.key, GROUP, entryId)
      .xdel(this.key, entryId)
      .exec()
      .catch((error: unknown) => this.warn(error, 'could not acknowledge a delivery entry'))
  }

  private warn(error: unknown, message: string): void {
    if (!this.redisDown) this.log.warn({ err: error }, message)
    this.redisDown = true
  }

  private up(): void {
    if (this.redisDown) this.log.info('delivery stream available again')
    this.redisDown = false
  }

  async halt(): Promise<ClaimedDelivery[]> {
    this.stopped = true
    if (this.reclaimTimer) clearTimeout(this.reclaimTimer)
    this.wake?.()
    // Interrupts a blocking XREADGROUP; entries Redis had handed it stay pending with this
    // consumer and are handed back below.
    this.reader?.disconnect()
    await this.loop
    await this.reclaiming
    return this.handBack()
  }

  async drain(): Promise<ClaimedDelivery[]> {
    await Promise.all([...this.running.values()])
    const left = await this.handBack()
    // This consumer leaves the group: nothing is pending with it any more.
    await this.redis.xgroup('DELCONSUMER', this.key, GROUP, this.consumer).catch((error: unknown) => this.warn(error, 'could not leave the delivery consumer group'))
    return left
  }

  /**
   * Entries this consumer was handed and is not running (a read the stop interrupted, an attempt
   * that failed unexpectedly): removed from the stream and returned, so that their claims are
   * released in PostgreSQL at once instead of waiting for XAUTOCLAIM after the lease.
   */
  private async handBack(): Promise<ClaimedDelivery[]> {
    const items: ClaimedDelivery[] = []
    try {
      const pending = (await this.redis.xpending(this.key, GROUP, '-', '+', 10_000, this.consumer)) as [string, string, number, number][]
      const ids = pending.map(([id]) => id).filter((id) => !this.running.has(id))
      if (!ids.length) return items
      // XCLAIM to ourselves (idle 0) returns the entries with their fields.
      const entries = (await this.redis.xclaim(this.key, GROUP, this.consumer, 0, ...ids)) as StreamEntry[]
      for (const [, fields] of entries) {
        const item = fields ? itemOf(fields) : null
        if (item) items.push(item)
      }
      await this.redis
        .multi()
        .xack(this.key, GROUP, ...ids)
        .xdel(this.key, ...ids)
        .exec()
    } catch (error) {
      this.warn(error, 'could not hand back delivery entries on stop; they are taken over after the claim timeout')
    }
    return items
  }
}

/** The queue item a stream entry carries, or null when it carries none. */
function itemOf(fields: string[]): ClaimedDelivery | null {
  const map = new Map<string, string>()
  for (let i = 0; i + 1 < fields.length; i += 2) map.set(fields[i]!, fields[i + 1]!)
  const id = map.get('delivery_id')
  const attempts = Number(map.get('attempts'))
  return id && Number.isInteger(attempts) ? { id, attempts, endpoint: map.get('endpoint') || undefined } : null
}
