// Multi-instance broker: one Redis stream `${prefix}events` shared by every instance. Publishing
// is XADD with an approximate MAXLEN (the retained history); the stream id is the event's cursor.
// Each instance runs one blocking XREAD loop on its own connection and hands what it reads to its
// hub, so an event is read and decoded once per instance, whichever instance published it.
// Under load the loop reads at most once per `readIntervalMs` (EVENT_READ_INTERVAL_MS): each
// XREAD then carries several events instead of one or two, which is what a read costs Redis and
// this process (per command, not per event; docs/performance.md, "Paced reads"). An idle loop,
// or one behind by a full batch, reads again at once.
import type { FastifyBaseLogger } from 'fastify'
import type { Redis } from 'ioredis'
import type { DomainEvent } from '../events/types.ts'
import { Batcher } from '../lib/batcher.ts'
import { restOfInterval } from '../lib/pace.ts'
import { decodeEvent, encodeEvent, type Broker, type EntryListener, type LogEntry, type LogInfo } from './broker.ts'
import { maxCursor, ORIGIN, type Cursor } from './cursor.ts'

/** The stream entry's one field: the encoded event. */
export const ENTRY_FIELD = 'e'
const READ_BLOCK_MS = 5_000
const READ_COUNT = 1_000

type StreamEntries = [id: string, fields: string[]][]

/** Largest sequence a cursor can carry (CURSOR_PATTERN allows 16 digits). */
const MAX_SEQ = '9999999999999999'

/** The greatest cursor below `cursor`. */
function before(cursor: Cursor): Cursor {
  const [ms, seq] = cursor.split('-').map(BigInt) as [bigint, bigint]
  if (seq > 0n) return `${ms}-${seq - 1n}`
  return ms > 0n ? `${ms - 1n}-${MAX_SEQ}` : ORIGIN
}

/**
 * The floor of the stream from XINFO STREAM. MAXLEN trimming does not raise
 * `max-deleted-entry-id` (only XDEL does; see redis/redis#11188), so when entries were removed
 * (`entries-added` > `length`) everything before the first retained entry counts as gone.
 */
function floorOf(field: (name: string) => string | number | undefined, newest: Cursor): Cursor {
  const deleted = String(field('max-deleted-entry-id') ?? ORIGIN)
  const added = Number(field('entries-added') ?? 0)
  const length = Number(field('length') ?? 0)
  if (added <= length) return deleted
  const firstEntry = field('first-entry') as StreamEntries[number] | null | undefined
  const first = firstEntry?.[0]
  // Every entry removed: nothing at or below the newest is retained.
  if (!first) return maxCursor(deleted, newest)
  return maxCursor(deleted, before(first))
}

function toEntries(raw: StreamEntries): LogEntry[] {
  const out: LogEntry[] = []
  for (const [id, fields] of raw) {
    const i = fields.indexOf(ENTRY_FIELD)
    const event = i >= 0 ? decodeEvent(fields[i + 1]!) : null
    if (event) out.push({ cursor: id, event })
  }
  return out
}

export class RedisBroker implements Broker {
  readonly kind = 'redis' as const
  private readonly key: string
  private readonly listeners: EntryListener[] = []
  private reader: Redis | null = null
  private lastRead: Cursor | null = null
  private stopped = true
  /** When the last XREAD was sent (performance.now()), and whether it returned a full batch. */
  private lastSentAt = Number.NEGATIVE_INFINITY
  private lastFull = false
  private loop: Promise<void> | null = null

  constructor(
    private readonly redis: Redis,
    private readonly duplicate: () => Redis,
    prefix: string,
    private readonly retention: number,
    private readonly log: FastifyBaseLogger,
    private readonly readIntervalMs = 0,
  ) {
    this.key = `${prefix}events`
  }

  // Concurrent publishes (one per committed request) leave together in one pipeline.
  private readonly appends = new Batcher<DomainEvent[], void>((batches) => this.append(batches.flat()).then(() => batches.map(() => undefined)), {
    maxInFlight: 2,
    maxBatch: 500,
  })

  async publish(events: DomainEvent[]): Promise<void> {
    if (events.length) await this.appends.submit(events)
  }

  private async append(events: DomainEvent[]): Promise<void> {
    const pipeline = this.redis.pipeline()
    for (const event of events) pipeline.xadd(this.key, 'MAXLEN', '~', this.retention, '*', ENTRY_FIELD, encodeEvent(event))
    const results = await pipeline.exec()
    const failed = results?.find(([error]) => error)
    if (!results || failed) throw failed?.[0] ?? new Error('Redis pipeline was not executed')
  }

  async range(after: Cursor, count: number): Promise<LogEntry[]> {
    const raw = (await this.redis.xrange(this.key, `(${after}`, '+', 'COUNT', count)) as StreamEntries
    return toEntries(raw)
  }

  async info(client: Redis = this.redis): Promise<LogInfo> {
    let raw: unknown[]
    try {
      raw = (await client.xinfo('STREAM', this.key)) as unknown[]
    } catch (error) {
      if (error instanceof Error && /no such key/i.test(error.message)) return { newest: ORIGIN, floor: ORIGIN }
      throw error
    }
    const field = (name: string): string | number | undefined => raw[raw.indexOf(name) + 1] as string | number | undefined
    const newest = String(field('last-generated-id') ?? ORIGIN)
    return { newest, floor: floorOf(field, newest) }
  }

  onEntries(listener: EntryListener): void {
    this.listeners.push(listener)
  }

  /** Waits cut short by stop(): a command in flight on a dead connection may never settle. */
  private readonly stopWaiters = new Set<() => void>()

  /**
   * The promise's outcome, or null once stop() is called. Not `Promise.race` with one long-lived
   * stop promise: every race leaves a reaction on it that keeps the race's result reachable, so
   * each XREAD reply (every event read) stayed in memory until shutdown (nodejs/node#17469).
   */
  private untilStop<T>(promise: Promise<T>): Promise<T | null> {
    if (this.stopped) return Promise.resolve(null)
    return new Promise<T | null>((resolve, reject) => {
      const onStop = (): void => resolve(null)
      this.stopWaiters.add(onStop)
      promise.then(
        (value) => {
          this.stopWaiters.delete(onStop)
          resolve(value)
        },
        (error: unknown) => {
          this.stopWaiters.delete(onStop)
          reject(error instanceof Error ? error : new Error(String(error)))
        },
      )
    })
  }

  /** Waits `ms`, or less if stop() is called (null then); the timer never holds the process. */
  private pause(ms: number): Promise<true | null> {
    let timer: NodeJS.Timeout | undefined
    const waited = this.untilStop(new Promise<true>((resolve) => (timer = setTimeout(() => resolve(true), ms))))
    return waited.finally(() => clearTimeout(timer))
  }

  private markPositioned!: () => void
  private readonly positioned = new Promise<void>((resolve) => (this.markPositioned = resolve))

  async start(waitMs = 2_000): Promise<void> {
    if (!this.stopped) return
    this.stopped = false
    this.reader = this.duplicate()
    this.loop = this.readLoop()
    let timer: NodeJS.Timeout | undefined
    await Promise.race([this.positioned, new Promise((resolve) => (timer = setTimeout(resolve, waitMs)))])
    clearTimeout(timer)
  }

  reading(): Promise<void> {
    return this.positioned
  }

  /** Until the connection is up (commands fail at once without an offline queue), or a while. */
  private connected(client: Redis): Promise<void> {
    if (client.status === 'ready') return Promise.resolve()
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer)
        client.off('ready', done)
        resolve()
      }
      const timer = setTimeout(done, 1_000)
      client.once('ready', done)
    })
  }

  private async readLoop(): Promise<void> {
    let failures = 0
    while (!this.stopped) {
      const reader = this.reader!
      try {
        await this.connected(reader)
        if (this.stopped) break
        if (this.lastRead === null) {
          // Start at the end of the log: no socket here has caught up yet (they wait for this).
          const pending = this.info(reader)
          pending.catch(() => {}) // abandoned on stop
          const info = await this.untilStop(pending)
          if (!info) break
          this.lastRead = info.newest
          this.markPositioned()
        }
        // Behind by a full batch: read on at once.
        const delay = this.lastFull ? 0 : restOfInterval(this.lastSentAt, performance.now(), this.readIntervalMs)
        if (delay > 0 && (await this.pause(delay)) === null) break
        this.lastSentAt = performance.now()
        const read = reader.xread('COUNT', READ_COUNT, 'BLOCK', READ_BLOCK_MS, 'STREAMS', this.key, this.lastRead) as Promise<[key: string, entries: StreamEntries][] | null>
        read.catch(() => {}) // abandoned on stop
        const result = await this.untilStop(read)
        if (this.stopped) break
        failures = 0
        this.lastFull = false
        if (!result) continue
        for (const [, rawEntries] of result) {
          if (!rawEntries.length) continue
          this.lastFull = rawEntries.length >= READ_COUNT
          this.lastRead = rawEntries[rawEntries.length - 1]![0]
          const entries = toEntries(rawEntries)
          if (!entries.length) continue
          for (const listener of this.listeners) {
            try {
              listener(entries)
            } catch (error) {
              this.log.error({ err: error }, 'event stream listener failed')
            }
          }
        }
      } catch (error) {
        if (this.stopped) break
        failures += 1
        if (failures === 1) this.log.warn({ err: error }, 'event stream read failed; retrying')
        await this.untilStop(new Promise((resolve) => setTimeout(resolve, Math.min(100 * 2 ** failures, 2_000)).unref()))
      }
    }
  }

  async stop(): Promise<void> {
    if (this.stopped) return
    this.stopped = true
    for (const wake of this.stopWaiters) wake()
    this.stopWaiters.clear()
    // Ends the blocking XREAD at once instead of waiting for its timeout.
    this.reader?.disconnect()
    await this.loop
  }
}
