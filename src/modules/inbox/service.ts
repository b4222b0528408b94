// The inbox (docs/realtime.md, "The inbox"): what is addressed to the caller and not yet
// acknowledged, counts first; waiting for it (coalesced: one answer carries everything that
// accumulated); acknowledging it. Items are written by the delivery planner (src/workers), for
// members of the event's channel; reads show only those of channels the caller belongs to now.
import type { ServiceContext } from '../context.ts'
import { AppError } from '../../lib/errors.ts'
import type { MemberPrincipal } from '../identity/principal.ts'
import { ADDRESS_KINDS } from '../../events/types.ts'
import * as repo from './repo.ts'
import { COUNT_CHANNELS_MAX, type AckBody, type AckResult, type InboxCounts, type InboxItem, type InboxPage } from './schemas.ts'

/** After a ring, wait this long before reading, so that a burst comes back as one answer. */
const COALESCE_MS = 100

export async function inboxCounts(ctx: ServiceContext, member: MemberPrincipal): Promise<InboxCounts> {
  const rows = await repo.countUnacknowledged(ctx.db.pool, member.id)
  const byKind = Object.fromEntries(ADDRESS_KINDS.map((k) => [k, 0])) as InboxCounts['by_kind']
  const byChannel = new Map<string, InboxCounts['by_channel'][number]>()
  let total = 0
  for (const r of rows) {
    total += r.n
    if (r.kind in byKind) byKind[r.kind as keyof InboxCounts['by_kind']] += r.n
    const entry = byChannel.get(r.channel_id) ?? { channel_id: r.channel_id, name: r.name, type: r.type, count: 0 }
    entry.count += r.n
    byChannel.set(r.channel_id, entry)
  }
  const by_channel = [...byChannel.values()].sort((a, b) => b.count - a.count || a.channel_id.localeCompare(b.channel_id)).slice(0, COUNT_CHANNELS_MAX)
  return { total, by_kind: byKind, by_channel }
}

function toItem(row: repo.InboxRow): InboxItem {
  return {
    id: row.id,
    kind: row.kind as InboxItem['kind'],
    event_id: row.event_id,
    event_type: row.event_type as InboxItem['event_type'],
    channel_id: row.channel_id,
    occurred_at: row.occurred_at.toISOString(),
    message: (row.body.message ?? null) as InboxItem['message'],
    reaction: (row.body.reaction ?? null) as InboxItem['reaction'],
    approval: (row.body.approval ?? null) as InboxItem['approval'],
    stop: (row.body.stop ?? null) as InboxItem['stop'],
  }
}

/** One page of unacknowledged items after `after`, with the counts. */
export async function readInbox(ctx: ServiceContext, member: MemberPrincipal, options: { after?: string; limit: number }): Promise<InboxPage> {
  const [counts, rows] = await Promise.all([inboxCounts(ctx, member), repo.unacknowledged(ctx.db.pool, member.id, options.after ?? null, options.limit)])
  const items = rows.slice(0, options.limit).map(toItem)
  return { counts, items, next_cursor: items.at(-1)?.id ?? null, has_more: rows.length > options.limit }
}

/**
 * Like readInbox; when the page is empty, waits up to `waitMs` for the planner to commit an item
 * for the member (the bell), then answers with everything that accumulated. The bell is armed
 * before the first read, so an item committed in between still wakes it. At the deadline, or when
 * the client leaves, the answer is the inbox as it is then.
 */
export async function waitForInbox(ctx: ServiceContext, member: MemberPrincipal, options: { after?: string; limit: number }, waitMs: number, signal: AbortSignal): Promise<InboxPage> {
  const deadline = Date.now() + waitMs
  const ear = ctx.inboxBell.arm(member.id)
  try {
    let page = await readInbox(ctx, member, options)
    while (!page.items.length) {
      const left = deadline - Date.now()
      if (left <= 0 || signal.aborted) break
      const rang = await ear.until(left, signal)
      if (rang) await new Promise((resolve) => setTimeout(resolve, COALESCE_MS))
      page = await readInbox(ctx, member, options)
      if (!rang) break
    }
    return page
  } finally {
    ctx.inboxBell.disarm(ear)
  }
}

export async function acknowledgeInbox(ctx: ServiceContext, member: MemberPrincipal, body: AckBody): Promise<AckResult> {
  const which = 'up_to' in body ? { upTo: body.up_to } : { ids: body.ids }
  // (The schema already refuses a body with both or neither; this keeps a direct caller honest.)
  if ('up_to' in body && 'ids' in body) throw new AppError('VALIDATION_ERROR', 'give either up_to or ids, not both')
  const acknowledged = await repo.acknowledge(ctx.db.pool, member.id, which)
  return { counts: await inboxCounts(ctx, member), acknowledged }
}

/**
 * A person moved their read marker: what they read there (mentions, DM messages) leaves their
 * inbox, so the web UI's mentions badge is the server's count. An agent acknowledges its inbox
 * itself (its read marker and its inbox stay independent, as its inbox contract says).
 */
export async function acknowledgeRead(ctx: ServiceContext, member: MemberPrincipal, channelId: string, messageId: string): Promise<void> {
  if (member.kind !== 'human') return
  await repo.acknowledgeRead(ctx.db.pool, member.id, channelId, messageId)
}
