// A queue that serves its keys fairly and sheds its heaviest key first. Each item carries keys
// (for password checks: the client address and the account); a key's load is the number of its
// items waiting or running. The next item to run is the waiting one whose keys carry the least load
// (ties: the oldest), so a newcomer overtakes a flood on its account or from its address instead of
// queueing behind it. Loads are bounded: when the queue holds more than `limit` waiting items, or a
// key more than `perKeyLimit` items, a waiting item is shed, the one of the offending key (any
// key, for the global bound) that carries the most load (ties: the newest): the flood, not the
// newcomer, unless the newcomer is itself the flood.

export interface FairQueueOptions {
  /** Waiting items, at most. */
  limit: number
  /** Waiting and running items of one key, at most. */
  perKeyLimit: number
}

interface Entry<T> {
  item: T
  keys: readonly string[]
  seq: number
}

export class FairQueue<T> {
  private readonly waiting: Entry<T>[] = []
  private readonly load = new Map<string, number>()
  private seq = 0

  constructor(private readonly options: FairQueueOptions) {}

  get size(): number {
    return this.waiting.length
  }

  /** Items of `key` waiting or running. */
  loadOf(key: string): number {
    return this.load.get(key) ?? 0
  }

  /** Adds an item; returns the items shed to respect the bounds (possibly this one). */
  push(item: T, keys: readonly string[]): T[] {
    const entry: Entry<T> = { item, keys: [...new Set(keys)], seq: this.seq++ }
    this.waiting.push(entry)
    this.add(entry.keys, 1)
    const shed: T[] = []
    for (;;) {
      const over = entry.keys.find((key) => this.loadOf(key) > this.options.perKeyLimit)
      const candidates = over !== undefined ? this.waiting.filter((e) => e.keys.includes(over)) : this.waiting.length > this.options.limit ? this.waiting : []
      const victim = this.heaviest(candidates)
      if (!victim) return shed
      this.remove(victim)
      this.add(victim.keys, -1)
      shed.push(victim.item)
    }
  }

  /** The next item to run (its keys stay loaded until `done`), or undefined when none waits. */
  next(): { item: T; keys: readonly string[] } | undefined {
    let best: Entry<T> | undefined
    let bestScore = Infinity
    for (const entry of this.waiting) {
      const score = this.score(entry)
      if (score < bestScore) {
        best = entry
        bestScore = score
      }
    }
    if (!best) return undefined
    this.remove(best)
    return { item: best.item, keys: best.keys }
  }

  /** A running item finished: its keys' load goes down. */
  done(keys: readonly string[]): void {
    this.add(keys, -1)
  }

  private score(entry: Entry<T>): number {
    let sum = 0
    for (const key of entry.keys) sum += this.loadOf(key)
    return sum
  }

  /** The entry with the most load, the newest among equals. */
  private heaviest(entries: Entry<T>[]): Entry<T> | undefined {
    let worst: Entry<T> | undefined
    let worstScore = -1
    for (const entry of entries) {
      const score = this.score(entry)
      if (score > worstScore || (score === worstScore && worst && entry.seq > worst.seq)) {
        worst = entry
        worstScore = score
      }
    }
    return worst
  }

  private remove(entry: Entry<T>): void {
    const index = this.waiting.indexOf(entry)
    if (index >= 0) this.waiting.splice(index, 1)
  }

  private add(keys: readonly string[], delta: number): void {
    for (const key of keys) {
      const value = this.loadOf(key) + delta
      if (value > 0) this.load.set(key, value)
      else this.load.delete(key)
    }
  }
}
