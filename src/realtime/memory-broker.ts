// Single-node broker: a bounded ring buffer in this process. The log starts empty at every
// start; a cursor from before the start is older than the retained history (resync_required).
import type { DomainEvent } from '../events/types.ts'
import type { Broker, EntryListener, LogEntry, LogInfo } from './broker.ts'
import { compareCursors, CursorClock, type Cursor } from './cursor.ts'

export class MemoryBroker implements Broker {
  readonly kind = 'memory' as const
  private readonly clock = new CursorClock()
  private readonly ring: (LogEntry | undefined)[]
  /** Index in `ring` of the oldest entry. */
  private head = 0
  private size = 0
  private floor: Cursor
  private newest: Cursor
  private readonly listeners: EntryListener[] = []

  constructor(private readonly capacity: number) {
    this.ring = new Array<LogEntry | undefined>(capacity)
    this.floor = this.clock.origin
    this.newest = this.clock.origin
  }

  async publish(events: DomainEvent[]): Promise<void> {
    if (!events.length) return
    const entries = events.map((event) => this.append(event))
    for (const listener of this.listeners) listener(entries)
  }

  private append(event: DomainEvent): LogEntry {
    const entry: LogEntry = { cursor: this.clock.next(), event }
    if (this.size === this.capacity) {
      this.floor = this.ring[this.head]!.cursor
      this.head = (this.head + 1) % this.capacity
      this.size -= 1
    }
    this.ring[(this.head + this.size) % this.capacity] = entry
    this.size += 1
    this.newest = entry.cursor
    return entry
  }

  async range(after: Cursor, count: number): Promise<LogEntry[]> {
    // Binary search for the first entry after `after`; entries are in cursor order.
    let lo = 0
    let hi = this.size
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (compareCursors(this.at(mid).cursor, after) <= 0) lo = mid + 1
      else hi = mid
    }
    const out: LogEntry[] = []
    for (let i = lo; i < this.size && out.length < count; i++) out.push(this.at(i))
    return out
  }

  private at(i: number): LogEntry {
    return this.ring[(this.head + i) % this.capacity]!
  }

  async info(): Promise<LogInfo> {
    return { newest: this.newest, floor: this.floor }
  }

  onEntries(listener: EntryListener): void {
    this.listeners.push(listener)
  }

  async start(): Promise<void> {}

  async reading(): Promise<void> {}

  async stop(): Promise<void> {}
}
