// The appends of a stream travel as `message_delta` frames (src/realtime/signals.ts), coalesced
// per stream on the instance that took them: the first append after a quiet spell goes out at
// once, the ones that follow within the frame interval go out together at its end. So a watcher
// gets at most DELTA_FRAMES_PER_SECOND frames per stream, and no append waits longer than one
// interval. Pure logic with an injected clock and timer, so it is tested without a server.

export interface Delta {
  channelId: string
  messageId: string
  threadId: string | null
  seq: number
  /** Where `text` starts (UTF-16 code units). */
  offset: number
  text: string
  /** Not sent to its author (it knows what it wrote). */
  authorId?: string
}

export interface Timers {
  now(): number
  setTimeout(fn: () => void, ms: number): unknown
  clearTimeout(handle: unknown): void
}

const realTimers: Timers = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const handle = setTimeout(fn, ms)
    handle.unref()
    return handle
  },
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
}

interface Pending {
  deltas: Delta[]
  timer: unknown
}

export class DeltaCoalescer {
  private readonly lastSent = new Map<string, number>()
  private readonly pending = new Map<string, Pending>()

  constructor(
    private readonly send: (delta: Delta) => void,
    private readonly intervalMs: number,
    private readonly timers: Timers = realTimers,
  ) {}

  add(delta: Delta): void {
    const key = delta.messageId
    const waiting = this.pending.get(key)
    if (waiting) {
      waiting.deltas.push(delta)
      return
    }
    const now = this.timers.now()
    const last = this.lastSent.get(key)
    if (last === undefined || now - last >= this.intervalMs) {
      this.emit([delta])
      return
    }
    const entry: Pending = { deltas: [delta], timer: null }
    entry.timer = this.timers.setTimeout(() => this.flush(key), this.intervalMs - (now - last))
    this.pending.set(key, entry)
  }

  /** Sends what waits for this stream now (its end is near) and forgets it. */
  end(messageId: string): void {
    this.flush(messageId)
    this.lastSent.delete(messageId)
  }

  /** Sends everything waiting (shutdown). */
  flushAll(): void {
    for (const key of [...this.pending.keys()]) this.flush(key)
  }

  private flush(key: string): void {
    const entry = this.pending.get(key)
    if (!entry) return
    this.pending.delete(key)
    this.timers.clearTimeout(entry.timer)
    this.emit(entry.deltas)
  }

  /** Contiguous deltas become one frame; a gap (another instance's append in between) starts another. */
  private emit(deltas: Delta[]): void {
    deltas.sort((a, b) => a.seq - b.seq)
    const frames: Delta[] = []
    for (const d of deltas) {
      const last = frames.at(-1)
      if (last && last.offset + last.text.length === d.offset) frames[frames.length - 1] = { ...last, seq: d.seq, text: last.text + d.text }
      else frames.push(d)
    }
    for (const f of frames) this.send(f)
    this.lastSent.set(deltas[0]!.messageId, this.timers.now())
    // Bounded: streams that went quiet are forgotten (an interval has passed for them).
    if (this.lastSent.size > 10_000) {
      const now = this.timers.now()
      for (const [k, at] of this.lastSent) if (now - at >= this.intervalMs) this.lastSent.delete(k)
    }
  }
}

/** At most `perSecond` calls per key in each one-second window; bounded like the typing throttle. */
export class WindowLimit {
  private readonly windows = new Map<string, { start: number; count: number }>()

  constructor(private readonly perSecond: number) {}

  /** Admits one call, or answers the milliseconds until the next window. */
  admit(key: string, now: number): number | null {
    const w = this.windows.get(key)
    if (!w || now - w.start >= 1000) {
      if (this.windows.size >= 10_000) for (const [k, v] of this.windows) if (now - v.start >= 1000) this.windows.delete(k)
      this.windows.set(key, { start: now, count: 1 })
      return null
    }
    if (w.count < this.perSecond) {
      w.count++
      return null
    }
    return 1000 - (now - w.start)
  }
}
