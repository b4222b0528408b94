// A parked long poll (GET /api/v1/events?wait=): a hub subscriber that only remembers the newest
// cursor the hub delivered to it and wakes its request. The request then reads the log itself
// (src/realtime/event-log/service.ts), so the page it answers follows the REST reader's rules.
import type { EventFilter } from '../events/filter.ts'
import { compareCursors, type Cursor } from './cursor.ts'
import type { Hub } from './hub.ts'
import type { HeldCredential } from '../modules/identity/held.ts'
import { Subscriber } from './subscriber.ts'

/**
 * Why a wait ended: an event the member may see arrived after the cursor waited on; the time
 * was up or the client went away; the server is shutting down; the credential was revoked.
 */
export type WaitOutcome = 'event' | 'timeout' | 'closed' | 'revoked'

export class LongPoll {
  readonly subscriber: Subscriber
  /** Newest cursor delivered by the hub. */
  private latest: Cursor | null = null
  private after: Cursor | null = null
  private settle: ((outcome: WaitOutcome) => void) | null = null
  private ended: 'closed' | 'revoked' | null = null

  constructor(
    readonly credential: HeldCredential,
    private readonly hub: Hub,
    filter: EventFilter = {},
  ) {
    this.subscriber = new Subscriber(
      credential.principal.id,
      (frame) => {
        if (frame.cursor === undefined) return // a signal: a long poll answers with the log only (it takes none)
        if (this.latest === null || compareCursors(frame.cursor, this.latest) > 0) this.latest = frame.cursor
        if (this.after !== null && compareCursors(frame.cursor, this.after) > 0) this.settle?.('event')
      },
      filter,
    )
  }

  /** Live from `after`: entries the hub buffered since registration that are later are delivered now. */
  live(after: Cursor): void {
    this.hub.goLive(this.subscriber, after)
  }

  /** Waits for a visible event after `after`, at most `ms`; resolves at once if one came already. */
  until(after: Cursor, ms: number, signal: AbortSignal): Promise<WaitOutcome> {
    if (this.ended) return Promise.resolve(this.ended)
    if (this.latest !== null && compareCursors(this.latest, after) > 0) return Promise.resolve('event')
    if (signal.aborted || ms <= 0) return Promise.resolve('timeout')
    return new Promise((resolve) => {
      const done = (outcome: WaitOutcome): void => {
        clearTimeout(timer)
        signal.removeEventListener('abort', onAbort)
        this.settle = null
        this.after = null
        resolve(outcome)
      }
      const onAbort = (): void => done('timeout')
      const timer = setTimeout(() => done('timeout'), ms)
      signal.addEventListener('abort', onAbort, { once: true })
      this.after = after
      this.settle = done
    })
  }

  /** Ends the wait from outside (shutdown, revoked credential); later waits end at once too. */
  end(outcome: 'closed' | 'revoked'): void {
    this.ended = outcome
    this.settle?.(outcome)
  }
}
