// Adaptive group commit for hot-path statements (posting a message, looking up an API key).
// Items go out at once while fewer than `maxInFlight` batches are running; beyond that they wait
// and leave together, as one statement, when a batch finishes. Idle, nothing is delayed; under
// load, one round trip and one statement serve many requests, which is where the CPU went (every
// query is a syscall and a PostgreSQL statement, each costing more than the work it carries).

export interface BatcherOptions {
  maxInFlight: number
  maxBatch: number
}

interface Waiting<I, O> {
  item: I
  resolve: (value: O) => void
  reject: (error: unknown) => void
}

export class Batcher<I, O> {
  private queue: Waiting<I, O>[] = []
  private inFlight = 0

  /** `run` answers one result per item, in order, or throws for the whole batch. */
  constructor(
    private readonly run: (items: I[]) => Promise<O[]>,
    private readonly options: BatcherOptions,
  ) {}

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject })
      this.drain()
    })
  }

  private drain(): void {
    while (this.queue.length && this.inFlight < this.options.maxInFlight) {
      const batch = this.queue.splice(0, this.options.maxBatch)
      this.inFlight += 1
      this.run(batch.map((w) => w.item))
        .then(
          (results) => batch.forEach((w, i) => w.resolve(results[i]!)),
          (error: unknown) => batch.forEach((w) => w.reject(error)),
        )
        .finally(() => {
          this.inFlight -= 1
          this.drain()
        })
    }
  }
}
