// The inbox items an event makes: one per member it is addressed to (`DomainEvent.addressed`).
// Built by the delivery planner (src/workers/deliveries.ts), which inserts them only for members
// of the event's channel, in the transaction that marks the event planned.
import { frameTypeOf } from '../../events/define.ts'
import type { DomainEvent } from '../../events/types.ts'
import { uuidv7 } from '../../lib/ids.ts'

export interface NewInboxItem {
  id: string
  memberId: string
  eventId: string
  eventType: string
  kind: string
  channelId: string
  body: string
  occurredAt: string
}

/** What an item shows: the message, the reaction, the approval or the Stop (the event's own payload, trimmed). */
function bodyOf(event: DomainEvent): Record<string, unknown> | null {
  switch (event.type) {
    case 'message.created':
    case 'message.mentioned':
      return { message: event.payload.message, reaction: null }
    case 'reaction.added': {
      const p = event.payload
      return { message: null, reaction: { message_id: p.message_id, emoji: p.emoji, member_id: p.member_id, member_type: p.member_type, member_name: p.member_name } }
    }
    case 'approval.decided':
    case 'approval.expired':
    case 'approval.cancelled':
      return { message: null, reaction: null, approval: event.payload.approval }
    case 'message.stop_requested':
      return { message: null, reaction: null, stop: event.payload }
    default:
      return null
  }
}

/** The items of these events, in event order (ids are UUIDv7, so the inbox's order follows). */
export function inboxItemsOf(events: DomainEvent[]): NewInboxItem[] {
  const out: NewInboxItem[] = []
  for (const event of events) {
    if (!event.addressed || !event.channelId) continue
    const body = bodyOf(event)
    if (!body) continue
    const json = JSON.stringify(body)
    for (const [memberId, kind] of Object.entries(event.addressed)) {
      out.push({ id: uuidv7(), memberId, eventId: event.id, eventType: frameTypeOf(event.type), kind, channelId: event.channelId, body: json, occurredAt: event.occurredAt })
    }
  }
  return out
}
