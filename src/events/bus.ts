// In-process domain event bus with a transactional outbox. A service changes data and records
// its events in one transaction (`transaction(fn)` or the raw-SQL path with `outboxInsert`),
// then the bus hands the committed events to subscribers. Subscribers never run on the
// request's critical path: their errors are logged, not thrown to the caller.
import type { FastifyBaseLogger } from 'fastify'
import { uuidv7 } from '../lib/ids.ts'
import type { Prisma, PrismaClient } from '../db/client.ts'
import { insertOutboxEvents } from './repo.ts'
import type { Addressed, ChannelIdOf, DomainEvent, DomainEventType, EventPayload } from './types.ts'

export type EventHandler = (events: DomainEvent[]) => void | Promise<void>
/** Records an event of the catalog (src/events/catalog.ts): its payload is checked against it. */
export type Emit = <T extends DomainEventType>(type: T, channelId: ChannelIdOf<T>, payload: EventPayload<T>, audience?: string[]) => DomainEvent<T>
export type Tx = Prisma.TransactionClient

export function newEvent<T extends DomainEventType>(type: T, channelId: ChannelIdOf<T>, payload: EventPayload<T>, audience?: string[]): DomainEvent<T> {
  const event = { id: uuidv7(), type, channelId, occurredAt: new Date().toISOString(), payload, ...(audience ? { audience } : {}) }
  // The object is exactly an EventOf<T>; the compiler cannot see through the distributive type.
  return event as unknown as DomainEvent<T>
}

/** Columns of outbox_events for a raw INSERT: (event_id, type, channel_id, payload, occurred_at). */
export function outboxRow(event: DomainEvent): [string, string, string | null, string, string] {
  return [event.id, event.type, event.channelId, JSON.stringify(outboxPayload(event)), event.occurredAt]
}

/** The payload column of an event's outbox row (its audience and addressees carried inside). */
export function outboxPayload(event: DomainEvent): Record<string, unknown> {
  if (!event.audience && !event.addressed) return event.payload
  return { ...event.payload, ...(event.audience ? { __audience: event.audience } : {}), ...(event.addressed ? { __addressed: event.addressed } : {}) }
}

/** An outbox_events row as raw queries select it (`id::text, event_id::text, type, …`). */
export interface OutboxRow {
  id: string
  event_id: string
  type: DomainEventType
  channel_id: string | null
  payload: Record<string, unknown>
  occurred_at: Date
}

/**
 * The event an outbox row holds (the inverse of `outboxRow`). Rows are written only by `emit` and
 * `outboxRow`, from payloads the compiler checked against the catalog: they are not parsed again.
 */
export function eventFromOutbox(row: OutboxRow): DomainEvent {
  const { __audience, __addressed, ...payload } = row.payload as Record<string, unknown> & { __audience?: unknown; __addressed?: unknown }
  const audience = Array.isArray(__audience) ? __audience.filter((x): x is string => typeof x === 'string') : undefined
  const addressed = __addressed && typeof __addressed === 'object' ? (__addressed as Addressed) : undefined
  return {
    id: row.event_id,
    type: row.type,
    channelId: row.channel_id,
    occurredAt: row.occurred_at.toISOString(),
    payload,
    ...(audience ? { audience } : {}),
    ...(addressed ? { addressed } : {}),
  } as DomainEvent
}

export class DomainEventBus {
  private readonly handlers: EventHandler[] = []

  constructor(
    private readonly prisma: PrismaClient,
    private readonly log: FastifyBaseLogger,
  ) {}

  /** Subscribers get every committed event, in commit order per publishing call. */
  subscribe(handler: EventHandler): () => void {
    this.handlers.push(handler)
    return () => {
      const i = this.handlers.indexOf(handler)
      if (i >= 0) this.handlers.splice(i, 1)
    }
  }

  /**
   * Runs fn in one interactive transaction; the events it emits are written to the outbox in
   * that same transaction and published once it commits.
   */
  async transaction<T>(fn: (tx: Tx, emit: Emit) => Promise<T>, options?: { isolationLevel?: Prisma.TransactionIsolationLevel }): Promise<T> {
    const events: DomainEvent[] = []
    const emit: Emit = (type, channelId, payload, audience) => {
      const event = newEvent(type, channelId, payload, audience)
      events.push(event)
      return event
    }
    const result = await this.prisma.$transaction(async (tx) => {
      const value = await fn(tx, emit)
      if (events.length) {
        await insertOutboxEvents(
          tx,
          events.map((e) => ({
            eventId: e.id,
            type: e.type,
            channelId: e.channelId,
            payload: outboxPayload(e) as Prisma.InputJsonValue,
            occurredAt: new Date(e.occurredAt),
          })),
        )
      }
      return value
    }, options)
    this.publish(events)
    return result
  }

  /** Hands already-committed events to subscribers (for changes made outside `transaction`). */
  publish(events: DomainEvent[]): void {
    if (!events.length) return
    for (const handler of this.handlers) {
      try {
        const pending = handler(events)
        if (pending instanceof Promise) pending.catch((error: unknown) => this.log.error({ err: error }, 'domain event subscriber failed'))
      } catch (error) {
        this.log.error({ err: error }, 'domain event subscriber failed')
      }
    }
  }
}
