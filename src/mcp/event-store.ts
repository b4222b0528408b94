// Resumable SSE for one 2025-era MCP session (the SDK's EventStore): every message the server
// sends on an SSE stream is kept with an id, and a client that reconnects with Last-Event-ID gets
// the ones it missed on that stream (2026-07-28 has no resumption). Bounded: the newest MAX_EVENTS of the session are kept; a client that
// was away longer misses the older ones (tool results it lost can be asked for again).
import type { EventId, EventStore, JSONRPCMessage, StreamId } from '@modelcontextprotocol/server'

const MAX_EVENTS = 200

interface Stored {
  seq: number
  streamId: StreamId
  message: JSONRPCMessage
}

/** Event ids are `<stream id>|<sequence>`; the sequence orders events across the session. */
export class SessionEventStore implements EventStore {
  private readonly events: Stored[] = []
  private seq = 0

  /** How many messages were stored since the session began. */
  get stored(): number {
    return this.seq
  }

  async storeEvent(streamId: StreamId, message: JSONRPCMessage): Promise<EventId> {
    this.seq += 1
    this.events.push({ seq: this.seq, streamId, message })
    if (this.events.length > MAX_EVENTS) this.events.splice(0, this.events.length - MAX_EVENTS)
    return `${streamId}|${this.seq}`
  }

  async getStreamIdForEventId(eventId: EventId): Promise<StreamId | undefined> {
    return parse(eventId)?.streamId
  }

  async replayEventsAfter(lastEventId: EventId, { send }: { send: (eventId: EventId, message: JSONRPCMessage) => Promise<void> }): Promise<StreamId> {
    const last = parse(lastEventId)
    if (!last) return ''
    for (const event of this.events) {
      if (event.streamId === last.streamId && event.seq > last.seq) await send(`${event.streamId}|${event.seq}`, event.message)
    }
    return last.streamId
  }
}

function parse(eventId: EventId): { streamId: StreamId; seq: number } | null {
  const bar = eventId.lastIndexOf('|')
  if (bar <= 0) return null
  const seq = Number(eventId.slice(bar + 1))
  return Number.isSafeInteger(seq) ? { streamId: eventId.slice(0, bar), seq } : null
}
