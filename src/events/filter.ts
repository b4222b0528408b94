// The one filter vocabulary of every way events leave the service (docs/realtime.md, "Filters"):
// `only=addressed|mentions` and `include_own_messages=false`, on GET /api/v1/events (and its long
// poll), the SSE stream, /ws, the MCP `wait_for_events` tool, agent webhooks and integrations.
// Filters only narrow: access rules (membership, checked at delivery) are applied before them.
import { Type } from 'typebox'
import type { DomainEvent } from './types.ts'

export type Only = 'addressed' | 'mentions'

export const ONLY_VALUES: readonly Only[] = ['addressed', 'mentions']

export const OnlyField = Type.Union([Type.Literal('addressed'), Type.Literal('mentions')], {
  description:
    '`addressed`: only the events addressed to you — a message in a DM with you, a message that mentions you, a reply in a thread you started or posted in, a reaction to your message (docs/realtime.md, "Addressed events"). `mentions`: only `message_mentioned` events. Absent: every event you may see.',
})

export interface EventFilter {
  /** Only these events (absent: all the member may see). */
  readonly only?: Only | null
  /** Leave out the member's own new and edited messages (`include_own_messages=false`; docs/loops.md). */
  readonly skipsOwnMessages?: boolean
}

export const NO_FILTER: EventFilter = {}

/** A new or edited message written by this member. */
export function ownMessage(memberId: string, event: DomainEvent): boolean {
  if (event.type !== 'message.created' && event.type !== 'message.updated') return false
  return (event.payload.message as { author_id?: unknown } | undefined)?.author_id === memberId
}

/** Whether the event is addressed to the member (see `DomainEvent.addressed`). */
export const isAddressedTo = (memberId: string, event: DomainEvent): boolean => event.addressed?.[memberId] !== undefined

/** Whether the filter leaves this event out for this member. */
export function filteredOut(filter: EventFilter, memberId: string, event: DomainEvent): boolean {
  if (filter.only === 'mentions' && event.type !== 'message.mentioned') return true
  if (filter.only === 'addressed' && !isAddressedTo(memberId, event)) return true
  return Boolean(filter.skipsOwnMessages && ownMessage(memberId, event))
}
