// The types and lists derived from the event catalog (./catalog.ts). A domain event has one shape
// inside the service (`DomainEvent`): services emit it, the outbox stores it (./bus.ts), the
// broker logs it (with a cursor: LogEntry, src/realtime/broker.ts), the hub and the delivery
// planner read it. It leaves the service as a client frame (src/realtime/frames.ts) or a webhook
// or integration body (src/workers/payloads.ts), each derived from the same entry.
import type { Static } from 'typebox'
import { EVENTS } from './catalog.ts'
import type { EventCatalog } from './define.ts'

type Catalog = typeof EVENTS

export type DomainEventType = keyof Catalog

/** The payload a service emits for this event type. */
export type EventPayload<T extends DomainEventType> = Static<Catalog[T]['payload']>

/** The channel id an event of this type carries: a channel event's id, or null. */
export type ChannelIdOf<T extends DomainEventType> = Catalog[T]['scope'] extends 'channel' ? string : null

interface EventOf<T extends DomainEventType> {
  /** UUIDv7, unique per event; webhook deliveries and clients de-duplicate on it. */
  id: string
  type: T
  /** The channel the event belongs to (null for workspace-wide events such as agent.connected). */
  channelId: ChannelIdOf<T>
  occurredAt: string
  payload: EventPayload<T>
  /**
   * Ids (users or agents) that may see the event besides the channel's current members, e.g.
   * the members of a channel that was just deleted or a member who was just removed.
   */
  audience?: string[]
  /**
   * The members this event is addressed to, each with why (docs/realtime.md, "Addressed events"):
   * computed once when the event is emitted, read by every filter (`only=addressed`), by webhook
   * and integration planning and by the inbox. Never the event's own author.
   */
  addressed?: Addressed
}

/** Why an event concerns a member: it mentions them, it is in a DM with them, it replies in a thread they took part in, reacts to their message, settles their approval request, or asks them to stop their streaming message. */
export type AddressKind = 'mention' | 'dm' | 'thread_reply' | 'reaction' | 'approval' | 'stop'
export const ADDRESS_KINDS: readonly AddressKind[] = ['mention', 'dm', 'thread_reply', 'reaction', 'approval', 'stop']
/** member id → why the event concerns that member. */
export type Addressed = Record<string, AddressKind>

/** A domain event; without a type argument, the union of all (narrow it on `type`). */
export type DomainEvent<T extends DomainEventType = DomainEventType> = T extends DomainEventType ? EventOf<T> : never

type TypesWith<K extends 'frame' | 'webhook' | 'integration'> = { [T in DomainEventType]: Catalog[T][K] extends null ? never : T }[DomainEventType]

/** Events clients receive (WebSocket frames, GET /api/v1/events). */
export type ClientEventType = TypesWith<'frame'>
/** Events an agent webhook may subscribe to (channel events: the agent must be a member). */
export type WebhookEventType = TypesWith<'webhook'>
/** Events an integration may subscribe to (the spec's list). */
export type IntegrationEventType = TypesWith<'integration'>

/** The event types of a catalog that leave the service this way, in catalog order. */
export function typesWith<C extends EventCatalog>(catalog: C, part: 'frame' | 'webhook' | 'integration'): (keyof C & string)[] {
  return Object.keys(catalog).filter((type) => catalog[type]![part] !== null)
}

export const DOMAIN_EVENT_TYPES = Object.keys(EVENTS) as DomainEventType[]
export const WEBHOOK_EVENTS = typesWith(EVENTS, 'webhook') as WebhookEventType[]
export const INTEGRATION_EVENTS = typesWith(EVENTS, 'integration') as IntegrationEventType[]
export const CLIENT_EVENTS = typesWith(EVENTS, 'frame') as ClientEventType[]

/**
 * Events relayed to the broker but not yet marked so: kept by the outbox relay
 * (src/realtime/relay.ts), read and cleared by the delivery planner (src/workers/deliveries.ts),
 * which sets the marks in the update it makes to every outbox row anyway. Declared here, below
 * both, so neither imports the other.
 */
export interface PublishedMarks {
  /** Ids waiting for their published mark. */
  pending(): string[]
  /** These ids were marked (by the planner's update). */
  marked(ids: string[]): void
}
