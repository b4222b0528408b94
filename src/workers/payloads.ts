// The bodies of outbound deliveries, built once when a delivery is planned and stored in
// deliveries.body, so every attempt sends the same bytes (the signature covers them). Their
// schemas are derived from the same catalog entries (src/events/openapi.ts).
//
// Agent webhooks: {event_id, event_type, occurred_at, webhook_id, agent_id, payload} where payload
// is the domain event's payload (message.created → {message: <the REST message object>}).
// Integrations: exactly the spec's envelope {event_type, integration_id, occurred_at, payload}
// with the payload the event's catalog entry builds (message.created as the spec lists it).
import { EVENTS } from '../events/catalog.ts'
import type { EventSpec } from '../events/define.ts'
import type { DomainEvent } from '../events/types.ts'

export function webhookBody(webhookId: string, agentId: string, event: DomainEvent): string {
  return JSON.stringify({
    event_id: event.id,
    event_type: event.type,
    occurred_at: event.occurredAt,
    webhook_id: webhookId,
    agent_id: agentId,
    payload: event.payload,
  })
}

/** The spec's integration payload; null for an event type integrations do not receive. */
export function integrationPayload(event: DomainEvent): Record<string, unknown> | null {
  // Widened to the catalog's common entry type: the entry and the event share `event.type`.
  const integration = (EVENTS[event.type] as EventSpec).integration
  return integration ? integration.build(event) : null
}

export function integrationBody(integrationId: string, event: DomainEvent): string | null {
  const payload = integrationPayload(event)
  if (!payload) return null
  return JSON.stringify({ event_type: event.type, integration_id: integrationId, occurred_at: event.occurredAt, payload })
}
