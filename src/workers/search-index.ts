// Keeps the messages' full-text index (GIN with fastupdate) flushed in the background. With
// fastupdate an insert only appends its words to the index's pending list, which is 3-5x cheaper
// than updating the index itself (measured: 27 µs against 96-165 µs per 20-word message). But the
// insert that finds the list over gin_pending_list_limit (4 MB) merges all of it into the index,
// on the request path: a 418 ms insert every two minutes at 800 posts/s. Autovacuum would flush
// it too, but only after inserts reach 20 % of the table. Flushing here every few seconds keeps
// the cheap inserts without the stall; inserts never wait for it (a flush in progress makes them
// skip theirs, PostgreSQL's ginInsertCleanup), and searches read a short list.
import type { FastifyBaseLogger } from 'fastify'
import type pg from 'pg'
import { flushSearchPendingList } from './repo.ts'

export class SearchIndexFlusher {
  /** Pending-list pages merged into the index so far. */
  pagesFlushed = 0
  private timer: NodeJS.Timeout | null = null
  private running: Promise<unknown> | null = null
  private failing = false
  private stopped = false

  constructor(
    private readonly pool: pg.Pool,
    private readonly intervalMs: number,
    private readonly log: FastifyBaseLogger,
  ) {}

  start(): void {
    if (this.intervalMs <= 0) return
    const tick = (): void => {
      this.running = this.flush().finally(() => {
        this.running = null
        if (!this.stopped) this.timer = setTimeout(tick, this.intervalMs)
      })
    }
    this.timer = setTimeout(tick, this.intervalMs)
  }

  /** Merges the pending list into the index; returns how many pages it held. */
  async flush(): Promise<number> {
    try {
      const pages = await flushSearchPendingList(this.pool)
      this.pagesFlushed += pages
      if (this.failing) this.log.info('search index flush works again')
      this.failing = false
      return pages
    } catch (error) {
      // Nothing is lost: inserts flush the list themselves when it is full.
      if (!this.failing) this.log.warn({ err: error }, 'could not flush the search index pending list; inserts will')
      this.failing = true
      return 0
    }
  }

  async stop(): Promise<void> {
    this.stopped = true
    if (this.timer) clearTimeout(this.timer)
    await this.running
  }
}
