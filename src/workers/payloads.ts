// The bodies of outbound deliveries, built once when a delivery is planned and stored in
// deliveries.body, so every attempt sends the same bytes (the signature covers them).
//
// Agent webhooks: {event_id, event_type, occurred_at, webhook_id, agent_id, payload} where payload
// is the domain event's payload (message.created → {message: <the REST message object>}).
// Integrations: exactly the spec's envelope {event_type, integration_id, occurred_at, payload}
// with the platform payloads below (message.created as the spec lists it).
import type { DomainEventType } from '../events/types.ts'

/** Events an agent webhook may subscribe to (channel-scoped: the agent must be a member). */
export const WEBHOOK_EVENTS = [
  'message.created',
  'message.updated',
  'message.deleted',
  'channel.created',
  'channel.updated',
  'channel.deleted',
  'member.joined',
  'member.left',
] as const satisfies readonly DomainEventType[]

/** Events an integration may subscribe to (the spec's list). */
export const INTEGRATION_EVENTS = ['message.created', 'channel.created', 'member.joined', 'agent.connected'] as const satisfies readonly DomainEventType[]

export type WebhookEventType = (typeof WEBHOOK_EVENTS)[number]
export type IntegrationEventType = (typeof INTEGRATION_EVENTS)[number]

/** An outbox event as the planner reads it. */
export interface OutboxEventRecord {
  eventId: string
  type: string
  channelId: string | null
  occurredAt: string
  payload: Record<string, unknown>
  audience: string[]
}

type Json = Record<string, unknown>

const lower = (v: unknown): string | null => (typeof v === 'string' ? v.toLowerCase() : null)
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null)
const obj = (v: unknown): Json => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {})

export function webhookBody(webhookId: string, agentId: string, event: OutboxEventRecord): string {
  return JSON.stringify({
    event_id: event.eventId,
    event_type: event.type,
    occurred_at: event.occurredAt,
    webhook_id: webhookId,
    agent_id: agentId,
    payload: event.payload,
  })
}

/** The spec's integration payloads; null for an event type integrations do not receive. */
export function integrationPayload(event: OutboxEventRecord): Json | null {
  const p = event.payload
  switch (event.type) {
    case 'message.created': {
      const m = obj(p.message)
      return {
        message_id: str(m.id),
        channel_id: str(m.channel_id) ?? event.channelId,
        author_id: str(m.author_id),
        author_type: lower(m.author_type),
        text: str(m.text) ?? '',
      }
    }
    case 'channel.created': {
      const c = obj(p.channel)
      return {
        channel_id: str(c.id) ?? event.channelId,
        name: str(c.name),
        description: str(c.description),
        topic: str(c.topic),
        type: str(c.type) ?? 'channel',
        created_at: str(c.created_at) ?? event.occurredAt,
        creator_id: str(p.creator_id),
        creator_type: lower(p.creator_type),
      }
    }
    case 'member.joined':
      return {
        channel_id: str(p.channel_id) ?? event.channelId,
        member_id: str(p.member_id),
        member_type: lower(p.member_type),
        member_name: str(p.member_name),
      }
    case 'agent.connected':
      return {
        agent_id: str(p.agent_id),
        agent_name: str(p.agent_name),
        connected_at: str(p.connected_at) ?? event.occurredAt,
      }
    default:
      return null
  }
}

export function integrationBody(integrationId: string, event: OutboxEventRecord): string | null {
  const payload = integrationPayload(event)
  if (!payload) return null
  return JSON.stringify({ event_type: event.type, integration_id: integrationId, occurred_at: event.occurredAt, payload })
}
