// Remembered Idempotency-Key responses live 24 h (src/modules/idempotency/service.ts): this drops
// the expired ones now and then. A lookup also forgets an expired one it finds, so the sweep only
// keeps the table small; it never decides whether a key is still remembered.
import type { FastifyBaseLogger } from 'fastify'
import type pg from 'pg'
import { sweepExpired } from '../modules/idempotency/service.ts'

export const IDEMPOTENCY_SWEEP_MS = 60 * 60 * 1000

export class IdempotencySweeper {
  private timer: NodeJS.Timeout | null = null

  constructor(
    private readonly pool: pg.Pool,
    private readonly log: FastifyBaseLogger,
    private readonly intervalMs = IDEMPOTENCY_SWEEP_MS,
  ) {}

  start(): void {
    this.timer = setInterval(() => sweepExpired(this.pool).catch((err: unknown) => this.log.warn({ err }, 'idempotency sweep failed')), this.intervalMs)
    this.timer.unref()
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer)
    this.timer = null
  }
}
