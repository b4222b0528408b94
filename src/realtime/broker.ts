// The broker carries committed domain events to every instance and keeps a bounded, replayable
// log of them. It assigns each event its cursor when it is published, so the log's order is the
// order of publication (an outbox bigserial is not commit-ordered across concurrent
// transactions, so "id > since" over the outbox could skip events). Two implementations:
// MemoryBroker (single node, a ring buffer) and RedisBroker (one Redis stream shared by all
// instances, XADD with MAXLEN, every instance reads it).
import type { DomainEvent } from '../events/types.ts'
import type { Cursor } from './cursor.ts'

/** An event as it sits in the log. */
export interface LogEntry {
  cursor: Cursor
  event: DomainEvent
}

export interface LogInfo {
  /** The newest cursor in the log (ORIGIN when it is empty and never held anything). */
  newest: Cursor
  /**
   * Events at or below this cursor are no longer retained; a reader whose cursor is below it may
   * have missed events and must resynchronise.
   */
  floor: Cursor
}

export type EntryListener = (entries: LogEntry[]) => void

export interface Broker {
  readonly kind: 'memory' | 'redis'
  /** Appends the events to the log (in order). Rejects when the log is unreachable. */
  publish(events: DomainEvent[]): Promise<void>
  /** Entries strictly after `after`, oldest first, at most `count`. */
  range(after: Cursor, count: number): Promise<LogEntry[]>
  info(): Promise<LogInfo>
  /** Every entry appended by any instance, in log order, as this instance learns of it. */
  onEntries(listener: EntryListener): void
  /**
   * Starts delivering to the listeners. Resolves once this instance reads the log (or after
   * `waitMs` if it cannot yet: the reader keeps trying in the background).
   */
  start(waitMs?: number): Promise<void>
  /**
   * Resolves once this instance's reader has a position in the log. A socket must not read its
   * catch-up history before that: the reader could otherwise start after the history and miss
   * the events in between.
   */
  reading(): Promise<void>
  stop(): Promise<void>
}

/** Serialised form of an event inside the log. */
export const encodeEvent = (event: DomainEvent): string => JSON.stringify(event)

export function decodeEvent(raw: string): DomainEvent | null {
  try {
    const value = JSON.parse(raw) as DomainEvent
    return value && typeof value.id === 'string' && typeof value.type === 'string' ? value : null
  } catch {
    return null
  }
}
