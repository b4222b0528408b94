// One open WebSocket, as the gateway and the hub see it: who is on it (the credential it was
// opened with), the bound on its send queue, its per-second frame budget and its keep-alive.
import type { Socket } from 'node:net'
import type { WebSocket } from 'ws'
import type { Only } from '../events/filter.ts'
import type { HeldCredential } from '../modules/identity/held.ts'
import type { MemberPrincipal } from '../modules/identity/principal.ts'
import type { LogEntry } from './broker.ts'
import type { Cursor } from './cursor.ts'
import type { Client } from './hub.ts'
import { Throttle, TYPING_INTERVAL_MS } from './signals.ts'

/** Close codes besides the standard ones (docs/realtime.md). */
export const CLOSE_GOING_AWAY = 1001
export const CLOSE_TRY_AGAIN_LATER = 1013
export const CLOSE_CREDENTIAL_INVALID = 4401
/**
 * An account awaiting the owner's approval: the upgrade is accepted only to close with this code,
 * because a browser cannot read the HTTP status of a refused upgrade (it sees 1006, like a lost
 * connection, and would retry for ever). Do not reconnect until GET /api/v1/auth/me says approved.
 */
export const CLOSE_APPROVAL_PENDING = 4403

/** The credential the socket was opened with (re-checked: src/modules/identity/held.ts). */
export type Credential = HeldCredential

export interface ConnectionLimits {
  maxBufferedBytes: number
  messagesPerSecond: number
}

const wireFrames = new WeakMap<Buffer, Buffer>()

/**
 * The unmasked text frame a server sends (RFC 6455 §5.2) for a JSON payload: header and payload
 * in one buffer, built once per payload however many sockets it goes to (the hub hands every
 * recipient the same buffer), so a fan-out is one `write` of a ready buffer per socket.
 */
export function textFrame(payload: Buffer): Buffer {
  let wire = wireFrames.get(payload)
  if (wire) return wire
  const n = payload.length
  const header = n < 126 ? 2 : n < 65_536 ? 4 : 10
  wire = Buffer.allocUnsafe(header + n)
  wire[0] = 0x81 // FIN, text
  if (n < 126) wire[1] = n
  else if (n < 65_536) {
    wire[1] = 126
    wire.writeUInt16BE(n, 2)
  } else {
    wire[1] = 127
    wire.writeUInt32BE(Math.floor(n / 2 ** 32), 2)
    wire.writeUInt32BE(n >>> 0, 6)
  }
  payload.copy(wire, header)
  wireFrames.set(payload, wire)
  return wire
}

export class Connection implements Client {
  readonly memberId: string
  pending: LogEntry[] | null = null
  floor: Cursor | null = null
  /** `include_own_messages=false` on /ws: no frames for the member's own messages (docs/loops.md). */
  skipsOwnMessages = false
  /** `only=addressed|mentions` on /ws (src/events/filter.ts). */
  only: Only | null = null
  /** WebSockets take typing, status and presence signals (src/realtime/signals.ts). */
  readonly signals = true
  /** One typing signal per channel every TYPING_INTERVAL_MS; extras are dropped. */
  readonly typing = new Throttle(TYPING_INTERVAL_MS, 1_000)
  private alive = true
  private windowStart = 0
  private windowCount = 0
  private corked = false
  private readonly uncork = (): void => {
    this.corked = false
    this.tcp?.uncork()
  }
  /** Client frames are handled one after the other, so messages keep the client's order. */
  queue: Promise<void> = Promise.resolve()

  constructor(
    readonly socket: WebSocket,
    /**
     * The TCP socket under `socket`. Frames are written to it directly, ready-made (`textFrame`),
     * and corked until the end of the tick, so the frames a socket gets from one batch of the log
     * leave in one system call. ws writes its own frames (pings, close) to the same socket, in
     * order; with a compression extension negotiated, frames go through ws instead.
     */
    private readonly tcp: Socket | null,
    readonly credential: Credential,
    private readonly limits: ConnectionLimits,
    private readonly onOverflow: (conn: Connection) => void,
  ) {
    this.memberId = credential.principal.id
    socket.on('pong', () => {
      this.alive = true
    })
  }

  get principal(): MemberPrincipal {
    return this.credential.principal
  }

  get open(): boolean {
    return this.socket.readyState === this.socket.OPEN
  }

  send(frame: Buffer): void {
    if (!this.open) return
    // A client that stops reading lets the queue grow: cut it off instead of buffering forever.
    if (this.socket.bufferedAmount + frame.length > this.limits.maxBufferedBytes) {
      this.onOverflow(this)
      this.socket.terminate()
      return
    }
    if (!this.tcp || this.socket.extensions) {
      this.socket.send(frame, { binary: false })
      return
    }
    if (!this.corked) {
      this.corked = true
      this.tcp.cork()
      process.nextTick(this.uncork)
    }
    this.tcp.write(textFrame(frame))
  }

  /** Whether the send queue is more than half full (a long replay waits for `drained`). */
  get congested(): boolean {
    return this.socket.bufferedAmount > this.limits.maxBufferedBytes / 2
  }

  /** Waits until the send queue is at most half full (replay of a long backlog). */
  async drained(): Promise<void> {
    while (this.open && this.congested) await new Promise((resolve) => setTimeout(resolve, 5))
  }

  /** Counts a client frame against the fixed one-second window; false beyond the budget. */
  allowFrame(now: number): boolean {
    if (now - this.windowStart >= 1_000) {
      this.windowStart = now
      this.windowCount = 0
    }
    this.windowCount += 1
    return this.windowCount <= this.limits.messagesPerSecond
  }

  /** Keep-alive tick: a socket that has not answered the previous ping is dropped. */
  heartbeat(): void {
    if (!this.alive) {
      this.socket.terminate()
      return
    }
    this.alive = false
    this.socket.ping()
  }
}
