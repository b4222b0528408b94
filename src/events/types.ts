// Domain events: emitted by services after their change commits, consumed by the realtime
// gateway, the event log (GET /api/v1/events) and webhook/integration deliveries.

export const DOMAIN_EVENT_TYPES = [
  'message.created',
  'message.updated',
  'message.deleted',
  'channel.created',
  'channel.updated',
  'channel.deleted',
  'member.joined',
  'member.left',
  'agent.connected',
] as const

export type DomainEventType = (typeof DOMAIN_EVENT_TYPES)[number]

export interface DomainEvent<P extends Record<string, unknown> = Record<string, unknown>> {
  /** UUIDv7, unique per event; webhook deliveries and clients de-duplicate on it. */
  id: string
  type: DomainEventType
  /** The channel the event belongs to (null for workspace-wide events such as agent.connected). */
  channelId: string | null
  occurredAt: string
  payload: P
  /**
   * Ids (users or agents) that may see the event besides the channel's current members, e.g.
   * the members of a channel that was just deleted or a member who was just removed.
   */
  audience?: string[]
}
