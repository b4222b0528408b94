// Reactions: one row per (message, emoji, member). Adding and removing lock the message's row so
// that the count each event carries is exact and events of one message are in order.
import type { ServiceContext } from '../context.ts'
import type { Prisma } from '../../db/client.ts'
import type { ReactionSummary } from '../../schemas/message.ts'

type Tx = Prisma.TransactionClient

/** Locks the message (false if it is gone). */
/** Locks the message; its author's id, or null when there is no such message in the channel. */
export async function lockMessage(tx: Tx, channelId: string, messageId: string): Promise<{ authorId: string } | null> {
  const rows = await tx.$queryRaw<{ author_id: string }[]>`SELECT author_id::text FROM messages WHERE id = ${messageId}::uuid AND channel_id = ${channelId}::uuid FOR UPDATE`
  return rows[0] ? { authorId: rows[0].author_id } : null
}

/** Adds the reaction; false if it was already there. */
export async function addReaction(tx: Tx, r: { messageId: string; memberId: string; memberType: 'AGENT' | 'HUMAN'; emoji: string }): Promise<boolean> {
  const { count } = await tx.messageReaction.createMany({ data: [r], skipDuplicates: true })
  return count === 1
}

/** Removes the reaction; false if there was none. */
export async function removeReaction(tx: Tx, r: { messageId: string; memberId: string; emoji: string }): Promise<boolean> {
  const { count } = await tx.messageReaction.deleteMany({ where: r })
  return count === 1
}

export function countEmoji(tx: Tx, messageId: string, emoji: string): Promise<number> {
  return tx.messageReaction.count({ where: { messageId, emoji } })
}

const SUMMARY_SQL = `
  SELECT message_id::text, emoji, count(*)::int AS count, coalesce(bool_or(member_id = $2::uuid), false) AS reacted
    FROM message_reactions
   WHERE message_id = ANY($1::uuid[])
   GROUP BY message_id, emoji
   ORDER BY message_id, min(created_at), emoji`

/** The reactions of these messages as `viewerId` sees them (null: nobody, `reacted` false). */
export async function summaries(ctx: ServiceContext, messageIds: string[], viewerId: string | null): Promise<Map<string, ReactionSummary[]>> {
  const out = new Map<string, ReactionSummary[]>()
  if (!messageIds.length) return out
  const { rows } = await ctx.db.pool.query<{ message_id: string; emoji: string; count: number; reacted: boolean }>({
    name: 'reaction-summaries',
    text: SUMMARY_SQL,
    values: [messageIds, viewerId],
  })
  for (const r of rows) {
    const list = out.get(r.message_id) ?? []
    list.push({ emoji: r.emoji, count: r.count, reacted: r.reacted })
    out.set(r.message_id, list)
  }
  return out
}
