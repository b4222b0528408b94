// Many small queries as few (group commit): a call made while no batch runs starts one at once,
// so an idle server adds no wait; calls made while one runs wait for it and go together in the
// next. Each call gets its own answer (or its batch's error). For the bursts where every caller
// asks the same small thing: 2,000 sockets connecting at once made 2,000 presence writes, each
// waiting for one of 20 pooled connections, and hundreds gave up.
export class Batched<T, R> {
  private queued: { item: T; resolve: (result: R) => void; reject: (error: unknown) => void }[] = []
  private running = false

  /** `run` answers one result per item, in order. */
  constructor(
    private readonly run: (items: T[]) => Promise<R[]>,
    private readonly maxBatch = 1_000,
  ) {}

  call(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queued.push({ item, resolve, reject })
      if (!this.running) void this.drain()
    })
  }

  private async drain(): Promise<void> {
    this.running = true
    while (this.queued.length) {
      const batch = this.queued.splice(0, this.maxBatch)
      try {
        const results = await this.run(batch.map((b) => b.item))
        batch.forEach((b, i) => b.resolve(results[i]!))
      } catch (error) {
        for (const b of batch) b.reject(error)
      }
    }
    this.running = false
  }
}
