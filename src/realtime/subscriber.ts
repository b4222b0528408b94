// A hub client that is not a WebSocket: a Server-Sent Events stream or a parked long poll
// (GET /api/v1/events/stream, GET /api/v1/events?wait=). It registers with the same hub as the
// sockets, so it gets the same frames, chosen by the same membership check at delivery, from the
// same broker subscription — there is no second fan-out path. The hub hands every recipient the
// same encoded buffer; its cursor and type are read once per buffer, not once per subscriber.
import type { EventFilter, Only } from '../events/filter.ts'
import type { LogEntry } from './broker.ts'
import type { Cursor } from './cursor.ts'
import type { Client } from './hub.ts'

/** A frame as the hub delivered it. */
export interface DeliveredFrame {
  /** Absent for an ephemeral signal (a message delta). */
  cursor: Cursor | undefined
  type: string
  /** The frame's JSON text, exactly as a socket receives it. */
  json: string
}

const read = new WeakMap<Buffer, DeliveredFrame>()

export function deliveredFrame(frame: Buffer): DeliveredFrame {
  let out = read.get(frame)
  if (!out) {
    const json = frame.toString()
    const { type, cursor } = JSON.parse(json) as { type: string; cursor: Cursor }
    out = { type, cursor, json }
    read.set(frame, out)
  }
  return out
}

export class Subscriber implements Client {
  pending: LogEntry[] | null = null
  floor: Cursor | null = null
  readonly only: Only | null
  readonly skipsOwnMessages: boolean

  constructor(
    readonly memberId: string,
    private readonly onFrame: (frame: DeliveredFrame, raw: Buffer) => void,
    filter: EventFilter = {},
    /** An SSE stream takes message deltas; a long poll (which answers with the log) does not. */
    readonly sseSignals = false,
  ) {
    this.only = filter.only ?? null
    this.skipsOwnMessages = filter.skipsOwnMessages ?? false
  }

  send(frame: Buffer): void {
    this.onFrame(deliveredFrame(frame), frame)
  }
}
