// wait_for_events: callers parked until an event they may see enters the log. One listener on the
// broker (every entry from every instance) wakes the waiters an entry concerns; a woken waiter
// reads the log itself through the same service as GET /api/v1/events, so access rules are the
// log reader's, not this file's. A waiter is armed before its first read, so an event that lands
// between the read and the wait still wakes it.
import type { LogEntry } from '../realtime/broker.ts'
import { isClientEvent } from '../realtime/frames.ts'

export class Waiter {
  private woken = false
  private wakeUp: (() => void) | null = null

  constructor(
    readonly memberId: string,
    readonly channels: ReadonlySet<string>,
  ) {}

  concerns(entry: LogEntry): boolean {
    const { event } = entry
    if (!isClientEvent(event)) return false
    if (this.channels.has(event.channelId!)) return true
    if (event.audience?.includes(this.memberId)) return true
    // Added to a channel the waiter did not know about.
    return event.type === 'member.joined' && event.payload.member_id === this.memberId
  }

  wake(): void {
    this.woken = true
    this.wakeUp?.()
  }

  /** Resolves true when woken (at once if it already was), false after `ms` or on abort. */
  until(ms: number, signals: AbortSignal[]): Promise<boolean> {
    if (this.woken) return Promise.resolve(true)
    return new Promise((resolve) => {
      const done = (value: boolean) => {
        clearTimeout(timer)
        for (const s of signals) s.removeEventListener('abort', onAbort)
        this.wakeUp = null
        resolve(value)
      }
      const onAbort = () => done(false)
      const timer = setTimeout(() => done(false), Math.max(0, ms))
      this.wakeUp = () => done(true)
      for (const s of signals) {
        if (s.aborted) return done(false)
        s.addEventListener('abort', onAbort, { once: true })
      }
    })
  }
}

export class Inbox {
  private readonly waiters = new Set<Waiter>()

  get size(): number {
    return this.waiters.size
  }

  arm(memberId: string, channels: ReadonlySet<string>): Waiter {
    const waiter = new Waiter(memberId, channels)
    this.waiters.add(waiter)
    return waiter
  }

  disarm(waiter: Waiter): void {
    this.waiters.delete(waiter)
  }

  readonly dispatch = (entries: LogEntry[]): void => {
    if (!this.waiters.size) return
    for (const waiter of this.waiters) {
      if (entries.some((entry) => waiter.concerns(entry))) waiter.wake()
    }
  }
}
