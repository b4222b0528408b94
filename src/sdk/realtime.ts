// A reconnecting client for the service's WebSocket (`/ws`, docs/realtime.md), usable in the
// browser (global WebSocket) and in Node (the `ws` package): it resumes from the last cursor it
// processed (`since=`), drops events it has already seen (by `event_id`), reconnects with
// exponential backoff and full jitter, and reports its state so a UI can say "reconnecting…".
// It stops for good on close code 4401 (credential revoked or expired).

/** The few WebSocket members used here; the DOM WebSocket and `ws` both have them. */
import type { ControlFrame, EventFrame, ServerFrame } from './frames.ts'

export type { ControlFrame, EventFrame, ServerFrame } from './frames.ts'

export interface SocketLike {
  onopen: ((event: unknown) => void) | null
  onmessage: ((event: { data: unknown }) => void) | null
  onclose: ((event: { code: number; reason?: string }) => void) | null
  onerror: ((event: unknown) => void) | null
  send(data: string): void
  close(code?: number, reason?: string): void
  readonly readyState: number
}

export type RealtimeStatus = 'connecting' | 'live' | 'reconnecting' | 'stopped'

/** An event frame (new_message, message_updated, …): a member of the generated union (frames.ts). */
export type RealtimeEvent = EventFrame

export interface RealtimeOptions {
  /** The socket address for a cursor (null: no cursor yet), e.g. `wss://host/ws?token=…&since=…`. */
  url: (since: string | null) => string
  /** Resume from this cursor (e.g. another client's `lastCursor`); absent or null: from now. */
  cursor?: string | null
  /** Opens a socket: `(url) => new WebSocket(url)`. */
  connect: (url: string) => SocketLike
  onEvent: (event: RealtimeEvent) => void
  /** The log no longer reaches back to our cursor: reload what you keep over REST. */
  onResync?: () => void
  onStatus?: (status: RealtimeStatus) => void
  /** Any other frame (ready, ack, error, pong, the ephemeral signals: typing, presence, deltas…). */
  onFrame?: (frame: ControlFrame) => void
  /** First retry delay and the cap, in ms (defaults 500 and 30,000). */
  minDelayMs?: number
  maxDelayMs?: number
  /** How many event ids to remember for de-duplication (default 5,000). */
  dedupWindow?: number
  random?: () => number
}

export class RealtimeClient {
  private socket: SocketLike | null = null
  private cursor: string | null = null
  private attempt = 0
  private timer: ReturnType<typeof setTimeout> | null = null
  private stopped = false
  private status: RealtimeStatus = 'connecting'
  private readonly seen = new Set<string>()
  private readonly seenOrder: string[] = []

  constructor(private readonly options: RealtimeOptions) {
    this.cursor = options.cursor ?? null
  }

  /** The cursor of the last event processed (send it as `since` to resume elsewhere). */
  get lastCursor(): string | null {
    return this.cursor
  }

  get currentStatus(): RealtimeStatus {
    return this.status
  }

  start(): void {
    this.stopped = false
    this.open()
  }

  stop(): void {
    this.stopped = true
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
    const socket = this.socket
    this.socket = null
    if (socket) {
      socket.onclose = null
      socket.onmessage = null
      socket.onerror = null
      // Closing a socket still connecting makes browsers log a warning: close it once open.
      if (socket.readyState === 0) socket.onopen = () => socket.close(1000, 'client stopped')
      else socket.close(1000, 'client stopped')
    }
    this.setStatus('stopped')
  }

  /** Sends a client frame; false when not connected (the caller decides to queue or report). */
  send(frame: Record<string, unknown>): boolean {
    if (!this.socket || this.status !== 'live') return false
    this.socket.send(JSON.stringify(frame))
    return true
  }

  /** Reconnect now instead of waiting for the backoff (e.g. the browser came back online). */
  reconnectNow(): void {
    if (this.stopped || this.status === 'live') return
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
    this.attempt = 0
    if (!this.socket) this.open()
  }

  private setStatus(status: RealtimeStatus): void {
    if (status === this.status) return
    this.status = status
    this.options.onStatus?.(status)
  }

  private open(): void {
    let socket: SocketLike
    try {
      socket = this.options.connect(this.options.url(this.cursor))
    } catch {
      this.scheduleReconnect()
      return
    }
    this.socket = socket
    socket.onmessage = (message) => this.handle(message.data)
    socket.onclose = (event) => {
      if (this.socket !== socket) return
      this.socket = null
      if (event.code === 4401) {
        this.stopped = true
        this.setStatus('stopped')
        return
      }
      this.scheduleReconnect()
    }
    socket.onerror = () => {
      // A close event follows; reconnecting is decided there.
    }
  }

  private scheduleReconnect(): void {
    if (this.stopped) return
    this.setStatus('reconnecting')
    const min = this.options.minDelayMs ?? 500
    const max = this.options.maxDelayMs ?? 30_000
    const ceiling = Math.min(max, min * 2 ** this.attempt)
    this.attempt += 1
    const delay = Math.max(min / 2, (this.options.random ?? Math.random)() * ceiling)
    this.timer = setTimeout(() => {
      this.timer = null
      if (!this.stopped) this.open()
    }, delay)
  }

  private remember(eventId: string): boolean {
    if (this.seen.has(eventId)) return false
    this.seen.add(eventId)
    this.seenOrder.push(eventId)
    const window = this.options.dedupWindow ?? 5000
    while (this.seenOrder.length > window) this.seen.delete(this.seenOrder.shift()!)
    return true
  }

  private handle(data: unknown): void {
    let frame: ServerFrame
    try {
      // Where the server's frames are taken at their word: they follow its published schemas (frames.ts).
      frame = JSON.parse(typeof data === 'string' ? data : String(data)) as ServerFrame
    } catch {
      return
    }
    if (frame.type === 'ready') {
      this.attempt = 0
      this.cursor ??= frame.cursor
      this.setStatus('live')
      this.options.onFrame?.(frame)
      return
    }
    if (frame.type === 'resync_required') {
      this.cursor = frame.cursor
      this.options.onResync?.()
      return
    }
    if ('event_id' in frame) {
      this.cursor = frame.cursor
      if (this.remember(frame.event_id)) this.options.onEvent(frame)
      return
    }
    this.options.onFrame?.(frame)
  }
}
