// Streaming messages (issue 25): a stream with no append for STREAM_IDLE_SECONDS, or stopped and
// not answered within 30 s, becomes `interrupted`. Every instance runs this timer; the state is in
// PostgreSQL, so the streams of an instance that died are ended by the others, and two sweeps at
// once end each stream once (src/modules/streams/service.ts, sweepStreams).
import type { FastifyBaseLogger } from 'fastify'

/** How often the sweep runs at most: a stream ends within this long of its deadline. */
export const STREAM_SWEEP_MS = 5_000

export class StreamSweeper {
  private timer: NodeJS.Timeout | null = null
  private running: Promise<void> | null = null

  constructor(
    private readonly sweep: () => Promise<number>,
    private readonly log: FastifyBaseLogger,
    private readonly intervalMs = STREAM_SWEEP_MS,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.run(), this.intervalMs)
    this.timer.unref()
  }

  /** One sweep (not two at once on this instance). */
  run(): Promise<void> {
    this.running ??= this.sweep()
      .then((ended) => {
        if (ended) this.log.info({ ended }, 'interrupted idle or stopped streams, expired thread statuses')
      })
      .catch((err: unknown) => this.log.warn({ err }, 'stream sweep failed'))
      .finally(() => {
        this.running = null
      })
    return this.running
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer)
    this.timer = null
    await this.running
  }
}
