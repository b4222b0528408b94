// Adaptive group commit for hot-path statements (posting a message, looking up an API key).
// Items go out at once while fewer than `maxInFlight` batches are running; beyond that they wait
// and leave together, as one statement, when a batch finishes. Idle, nothing is delayed; under
// load, one round trip and one statement serve many requests, which is where the CPU went (every
// query is a syscall and a PostgreSQL statement, each costing more than the work it carries).
//
// `minIntervalMs` gathers more under concurrent load, as PostgreSQL's commit_delay does: once
// batches carry several items (or items queued behind one in flight), the next batch starts no
// sooner than this long after the previous one started, unless as many items are waiting as the
// largest batch of the last second or two (then at once: a fixed set of callers posting back to
// back, who all wait for their answers, is never held for callers that will not come). A caller
// alone (one item at a time, nothing queued behind it) is never held.
import { restOfInterval } from './pace.ts'

export interface BatcherOptions {
  maxInFlight: number
  maxBatch: number
  /** Under concurrent load, a batch starts at most once per this many milliseconds (0: at once). */
  minIntervalMs?: number
}

interface Waiting<I, O> {
  item: I
  resolve: (value: O) => void
  reject: (error: unknown) => void
}

/** The largest of recent values: this window's and the previous one's. */
class RecentMax {
  private current = 0
  private previous = 0
  private windowStart = 0

  constructor(private readonly windowMs: number) {}

  add(value: number, now: number): void {
    this.roll(now)
    if (value > this.current) this.current = value
  }

  get(now: number): number {
    this.roll(now)
    return Math.max(this.current, this.previous)
  }

  private roll(now: number): void {
    if (now - this.windowStart < this.windowMs) return
    this.previous = now - this.windowStart < 2 * this.windowMs ? this.current : 0
    this.current = 0
    this.windowStart = now
  }
}

export class Batcher<I, O> {
  private queue: Waiting<I, O>[] = []
  private inFlight = 0
  private lastStart = Number.NEGATIVE_INFINITY
  /** The last batch carried several items, or items queued while batches ran. */
  private busy = false
  private timer: NodeJS.Timeout | null = null
  private readonly recentBatches = new RecentMax(1_000)

  /** `run` answers one result per item, in order, or throws for the whole batch. */
  constructor(
    private readonly run: (items: I[]) => Promise<O[]>,
    private readonly options: BatcherOptions,
  ) {}

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      if (this.inFlight >= this.options.maxInFlight) this.busy = true
      this.queue.push({ item, resolve, reject })
      if (this.timer && !this.gathering()) {
        clearTimeout(this.timer)
        this.timer = null
      }
      this.drain()
    })
  }

  /** Whether the next batch should wait for more: concurrent load, and fewer waiting than lately. */
  private gathering(): boolean {
    return this.busy && this.queue.length < Math.max(2, this.recentBatches.get(performance.now()))
  }

  private drain(): void {
    if (this.timer) return
    while (this.queue.length && this.inFlight < this.options.maxInFlight) {
      const delay = this.gathering() ? restOfInterval(this.lastStart, performance.now(), this.options.minIntervalMs ?? 0) : 0
      if (delay > 0) {
        this.timer = setTimeout(() => {
          this.timer = null
          this.drain()
        }, delay)
        return
      }
      const batch = this.queue.splice(0, this.options.maxBatch)
      this.busy = batch.length > 1
      this.lastStart = performance.now()
      this.recentBatches.add(batch.length, this.lastStart)
      this.inFlight += 1
      // The batch is done before its callers hear of it: an item a caller submits as soon as it
      // has its answer does not count as queued behind this batch.
      const settle = (each: (w: Waiting<I, O>, i: number) => void): void => {
        this.inFlight -= 1
        batch.forEach(each)
        this.drain()
      }
      this.run(batch.map((w) => w.item)).then(
        (results) => settle((w, i) => w.resolve(results[i]!)),
        (error: unknown) => settle((w) => w.reject(error)),
      )
    }
  }
}
