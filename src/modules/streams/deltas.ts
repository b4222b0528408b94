// The appends of a stream travel as `message_delta` frames (src/realtime/signals.ts), coalesced
// per stream on the instance that took them, with one rule: two frames of a stream are at least
// `gapMs` apart. An append that comes when the last frame is that old goes out at once, with
// whatever waits; one that comes sooner waits for the next such append, or `gapMs` at most. So
// frames go out on arrivals (a stream appending every 50 ms gets every other append sent at once
// and one frame per 100 ms, whatever the phase of its appends), and no append waits longer than
// `gapMs`. Pure logic with an injected clock and timer, so it is tested without a server.

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
    private readonly gapMs: number,
    private readonly timers: Timers = realTimers,
  ) {}

  add(delta: Delta): void {
    const key = delta.messageId
    const waiting = this.pending.get(key)
    const last = this.lastSent.get(key)
    if (last === undefined || this.timers.now() - last >= this.gapMs) {
      if (waiting) {
        this.pending.delete(key)
        this.timers.clearTimeout(waiting.timer)
        waiting.deltas.push(delta)
      }
      this.emit(waiting?.deltas ?? [delta])
      return
    }
    if (waiting) {
      waiting.deltas.push(delta)
      return
    }
    const entry: Pending = { deltas: [delta], timer: null }
    entry.timer = this.timers.setTimeout(() => this.flush(key), this.gapMs)
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
    // Bounded: streams that went quiet are forgotten (the gap has passed for them).
    if (this.lastSent.size > 10_000) {
      const now = this.timers.now()
      for (const [k, at] of this.lastSent) if (now - at >= this.gapMs) this.lastSent.delete(k)
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
