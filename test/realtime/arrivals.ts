// What a test client has received (WebSocket frames, SSE events), and waiting for the one a test
// expects: the first item not yet taken that matches, now or when it arrives. The wait is bounded
// only as a safety net: tests wait for events, never for time.
const SAFETY_MS = 20_000

interface Waiter<T> {
  pred: (item: T) => boolean
  resolve: (item: T) => void
  reject: (error: Error) => void
}

export class Arrivals<T> {
  readonly items: T[] = []
  private readonly taken = new Set<number>()
  private waiters: Waiter<T>[] = []
  private ended: Error | null = null

  push(item: T): void {
    this.items.push(item)
    const waiter = this.waiters.find((w) => w.pred(item))
    if (!waiter) return
    this.taken.add(this.items.length - 1)
    this.waiters = this.waiters.filter((w) => w !== waiter)
    waiter.resolve(item)
  }

  /** No more items will come: pending and later unmatched waits fail with `error`. */
  end(error: Error): void {
    this.ended = error
    for (const waiter of this.waiters) waiter.reject(error)
    this.waiters = []
  }

  next(pred: (item: T) => boolean, what: string): Promise<T> {
    for (let i = 0; i < this.items.length; i++) {
      if (!this.taken.has(i) && pred(this.items[i]!)) {
        this.taken.add(i)
        return Promise.resolve(this.items[i]!)
      }
    }
    if (this.ended) return Promise.reject(new Error(`${this.ended.message} (waiting for a ${what})`))
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${what} arrived`)), SAFETY_MS)
      this.waiters.push({
        pred,
        resolve: (item) => {
          clearTimeout(timer)
          resolve(item)
        },
        reject: (error) => {
          clearTimeout(timer)
          reject(error)
        },
      })
    })
  }
}
