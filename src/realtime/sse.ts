// Server-Sent Events (GET /api/v1/events/stream): one stream is one hub subscriber writing to one
// HTTP response. It sends the missed events after `Last-Event-ID` / `since` (or one
// `resync_required`), then `ready`, then live events, each as
//
//   id: <cursor>
//   event: <frame type>
//   data: <the frame's JSON, exactly as the WebSocket sends it>
//
// and a comment line every SSE_KEEPALIVE_MS so that proxies do not cut an idle response
// (src/realtime/http-events.ts runs the timer). JSON text holds no raw line break, so `data:` is
// always a single line. The catch-up follows the gateway's order: registered with the hub
// (buffering) before the history is read, so nothing is lost or repeated at the hand-over.
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http'
import type { EventFilter } from '../events/filter.ts'
import type { Broker, LogInfo } from './broker.ts'
import { compareCursors, type Cursor } from './cursor.ts'
import { replayVisible } from './history.ts'
import type { Hub } from './hub.ts'
import type { HeldCredential } from '../modules/identity/held.ts'
import { Subscriber, type DeliveredFrame } from './subscriber.ts'

export const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  // no-transform: compressing proxies would otherwise hold events back to fill a block.
  'cache-control': 'no-cache, no-transform',
  // nginx: do not buffer this response.
  'x-accel-buffering': 'no',
} as const

// A signal (a message delta) has no cursor: no `id:` line, so the client's Last-Event-ID stays that of the last event.
export const sseEvent = (type: string, cursor: Cursor | undefined, json: string): Buffer => Buffer.from(`${cursor === undefined ? '' : `id: ${cursor}\n`}event: ${type}\ndata: ${json}\n\n`)

/** The SSE bytes of a frame the hub delivers: built once per frame, whatever the number of streams. */
const encoded = new WeakMap<Buffer, Buffer>()
function sseOf(frame: DeliveredFrame, raw: Buffer): Buffer {
  let bytes = encoded.get(raw)
  if (!bytes) {
    bytes = sseEvent(frame.type, frame.cursor, frame.json)
    encoded.set(raw, bytes)
  }
  return bytes
}

export class EventStream {
  readonly subscriber: Subscriber
  private closed = false
  // Nothing is written before the head: a keep-alive or a shutdown comment reaching a stream
  // still being prepared would otherwise send an implicit 200 without the event-stream headers.
  private headSent = false

  constructor(
    readonly credential: HeldCredential,
    readonly res: ServerResponse,
    private readonly maxBufferedBytes: number,
    private readonly onOverflow: (stream: EventStream) => void,
    filter: EventFilter = {},
  ) {
    this.subscriber = new Subscriber(credential.principal.id, (frame, raw) => this.write(sseOf(frame, raw)), filter, true)
    res.once('close', () => {
      this.closed = true
    })
  }

  get open(): boolean {
    return !this.closed && !this.res.destroyed && !this.res.writableEnded
  }

  /** Sends the response head; until then, frames, comments and `end` write nothing. */
  begin(headers: OutgoingHttpHeaders): void {
    this.res.writeHead(200, headers)
    this.headSent = true
  }

  /** Writes, unless the client has let more than the send-queue bound pile up: then it is cut. */
  write(chunk: Buffer | string): void {
    if (!this.open || !this.headSent) return
    if (this.res.writableLength + chunk.length > this.maxBufferedBytes) {
      this.onOverflow(this)
      this.res.destroy()
      return
    }
    this.res.write(chunk)
  }

  /** A control or event frame (anything with `type` and `cursor`). */
  frame(frame: { type: string; cursor: Cursor; [field: string]: unknown }): void {
    this.write(sseEvent(frame.type, frame.cursor, JSON.stringify(frame)))
  }

  comment(text: string): void {
    // Skipped while the client is behind: the queued bytes keep the connection busy anyway.
    if (this.res.writableLength === 0) this.write(`: ${text}\n\n`)
  }

  /** Resolves once the send queue is at most half full, or the stream closed (long replays). */
  async drained(): Promise<void> {
    while (this.open && this.res.writableLength > this.maxBufferedBytes / 2) {
      await new Promise<void>((resolve) => {
        const done = (): void => {
          this.res.off('drain', done)
          this.res.off('close', done)
          resolve()
        }
        this.res.once('drain', done)
        this.res.once('close', done)
      })
    }
  }

  /** Ends the response, after a last frame or comment if given. */
  end(last?: { type: string; cursor?: Cursor; [k: string]: unknown } | string): void {
    if (!this.open || !this.headSent) return
    if (typeof last === 'string') this.res.write(`: ${last}\n\n`)
    else if (last) this.res.write(`event: ${last.type}\ndata: ${JSON.stringify(last)}\n\n`)
    this.res.end()
  }
}

/**
 * Catch-up and hand-over to live delivery, once the stream is registered with the hub and the
 * response head is sent: the missed events (or resync_required), `ready`, then live.
 */
export async function startStream(stream: EventStream, broker: Broker, hub: Hub, info: LogInfo, since: Cursor | undefined): Promise<void> {
  let cursor = info.newest
  let replayed = 0
  if (since !== undefined) {
    if (compareCursors(since, info.floor) < 0 || compareCursors(since, info.newest) > 0) {
      stream.frame({ type: 'resync_required', cursor, error: 'the cursor is older than the retained event history; reload state over REST and continue from this cursor' })
    } else {
      ;({ cursor, replayed } = await replayVisible(broker, hub, stream.subscriber, since, async (frame) => {
        await stream.drained()
        if (stream.open) stream.frame(frame)
        return stream.open
      }))
    }
  }
  if (!stream.open) return
  const p = stream.credential.principal
  stream.frame({ type: 'ready', cursor, replayed, principal: { id: p.id, type: p.kind === 'agent' ? 'AGENT' : 'HUMAN', name: p.kind === 'agent' ? p.name : p.displayName } })
  hub.goLive(stream.subscriber, cursor)
}
