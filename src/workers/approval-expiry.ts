// The expiry of approval requests (docs/approvals.md): a timer per instance that sleeps until the
// next pending expiry (read from the database, so it survives restarts) or POLL_MS at most (a
// request posted on another instance), then expires what is due in one UPDATE … WHERE status =
// 'pending' (src/modules/approvals/repo.ts). Two instances may sweep at once: SKIP LOCKED and the
// status condition expire each request once, with one event. A request posted here wakes the
// timer sooner when it expires before the planned wake.
import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import type { DomainEvent } from '../events/types.ts'
import { expireDue, nextExpiry } from '../modules/approvals/service.ts'

export const APPROVAL_POLL_MS = 30_000

export class ApprovalExpiry {
  private timer: NodeJS.Timeout | null = null
  private wakeAt = Infinity
  private running: Promise<void> | null = null
  private stopped = false
  private unsubscribe: (() => void) | null = null

  constructor(
    private readonly app: FastifyInstance,
    private readonly log: FastifyBaseLogger,
    private readonly pollMs = APPROVAL_POLL_MS,
  ) {}

  start(): void {
    this.unsubscribe = this.app.events.subscribe((events) => this.heard(events))
    this.schedule(0)
  }

  async stop(): Promise<void> {
    this.stopped = true
    this.unsubscribe?.()
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
    await this.running
  }

  /** A new request expiring before the planned wake brings the wake forward. */
  private heard(events: DomainEvent[]): void {
    for (const e of events) {
      if (e.type !== 'message.created' || !e.payload.message.approval) continue
      const at = Date.parse(e.payload.message.approval.expires_at)
      if (at < this.wakeAt) this.schedule(at - Date.now())
    }
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return
    if (this.timer) clearTimeout(this.timer)
    const delay = Math.max(0, Math.min(delayMs, this.pollMs))
    this.wakeAt = Date.now() + delay
    this.timer = setTimeout(() => void this.sweep(), delay)
    this.timer.unref()
  }

  private async sweep(): Promise<void> {
    if (this.running || this.stopped) return
    let next: Date | null = null
    this.running = (async () => {
      try {
        const expired = await expireDue(this.app.ctx)
        if (expired) this.log.info({ expired }, 'approval requests expired')
        next = await nextExpiry(this.app.ctx)
      } catch (err) {
        this.log.warn({ err }, 'approval expiry sweep failed')
      }
    })()
    await this.running
    this.running = null
    const at = next as Date | null
    // A few milliseconds past the expiry, so that `expires_at <= now()` holds in the database too.
    this.schedule(at ? at.getTime() - Date.now() + 5 : this.pollMs)
  }
}
