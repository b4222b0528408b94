// The inbox's bell: wakes the requests waiting for a member's inbox (GET /api/v1/inbox?wait=, MCP
// wait_for_inbox) when the delivery planner has committed new items for that member, on whichever
// instance planned them: with Redis the ring crosses instances over one pub/sub channel, without
// it stays in the process. A ring that is lost (Redis reconnecting) costs latency, not items: a
// waiting request reads the inbox again at its deadline. src/plugins/inbox-bell.ts provides it to
// the app.

/** A waiting request's ear on one member's bell, armed before its first read. */
export class Ear {
  private rang = false
  private wakeUp: (() => void) | null = null

  constructor(readonly memberId: string) {}

  ring(): void {
    this.rang = true
    this.wakeUp?.()
  }

  /** Resolves true once the bell rang since the last call (at once if it did), false after `ms` or on abort. */
  until(ms: number, signal: AbortSignal): Promise<boolean> {
    if (this.rang) {
      this.rang = false
      return Promise.resolve(true)
    }
    if (signal.aborted || ms <= 0) return Promise.resolve(false)
    return new Promise((resolve) => {
      const done = (rang: boolean): void => {
        clearTimeout(timer)
        signal.removeEventListener('abort', onAbort)
        this.wakeUp = null
        if (rang) this.rang = false
        resolve(rang)
      }
      const onAbort = (): void => done(false)
      const timer = setTimeout(() => done(false), ms)
      signal.addEventListener('abort', onAbort, { once: true })
      this.wakeUp = () => done(true)
    })
  }
}

export interface InboxBell {
  /** New items were committed for these members. */
  ring(memberIds: string[]): void
  /** Listens for the member's bell until `disarm`. */
  arm(memberId: string): Ear
  disarm(ear: Ear): void
  /** Requests waiting on this instance. */
  readonly waiting: number
}
