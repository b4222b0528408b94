// SQL of approvals (docs/approvals.md). The request is inserted by the message's own statement
// (src/modules/messages/repo.ts); here: reads, the one UPDATE that decides (first wins), the
// cancellation, and the expiry sweep (many instances: each due row is expired once).
import type pg from 'pg'
import type { Prisma } from '../../db/client.ts'
import { approvalRecordOfJson, type ApprovalRecord } from '../../schemas/approval.ts'

type Tx = Prisma.TransactionClient

const recordsOf = (rows: { a: Record<string, unknown> }[]): ApprovalRecord[] => rows.map((r) => approvalRecordOfJson(r.a))

/** The approval of a message of this channel; null when the message carries none. */
export async function findApproval(pool: pg.Pool, channelId: string, messageId: string): Promise<ApprovalRecord | null> {
  const { rows } = await pool.query<{ a: Record<string, unknown> }>({
    name: 'approval-find',
    text: 'SELECT to_jsonb(p) AS a FROM approvals p WHERE p.message_id = $1 AND p.channel_id = $2',
    values: [messageId, channelId],
  })
  return recordsOf(rows)[0] ?? null
}

/** Human ids among these (listed approvers must be users of the workspace). */
export async function existingUsers(pool: pg.Pool, ids: string[]): Promise<string[]> {
  const { rows } = await pool.query<{ id: string }>('SELECT id::text FROM users WHERE id = ANY($1::uuid[])', [ids])
  return rows.map((r) => r.id)
}

export interface Outcome {
  status: 'approved' | 'denied' | 'cancelled'
  decision: string | null
  decidedBy: string
  decidedByName: string
  comment: string | null
  finalArguments: unknown
}

/**
 * Records the outcome if the request is still pending and still exactly what was checked (its
 * action and arguments as read): the first of concurrent decisions wins, the others match no row.
 */
export async function settle(tx: Tx, messageId: string, shown: { action: string; arguments: unknown }, o: Outcome): Promise<ApprovalRecord | null> {
  const rows = await tx.$queryRaw<{ a: Record<string, unknown> }[]>`
    UPDATE approvals p
       SET status = ${o.status}, decision = ${o.decision}, decided_by = ${o.decidedBy}::uuid, decided_by_name = ${o.decidedByName},
           decided_at = now(), comment = ${o.comment}, final_arguments = ${o.finalArguments === null ? null : JSON.stringify(o.finalArguments)}::jsonb
     WHERE p.message_id = ${messageId}::uuid AND p.status = 'pending'
       AND p.action = ${shown.action} AND p.arguments = ${JSON.stringify(shown.arguments)}::jsonb
    RETURNING to_jsonb(p) AS a`
  return recordsOf(rows)[0] ?? null
}

/**
 * Expires what is due, at most `limit` rows: each gets its `on_expiry` outcome. Rows another
 * instance is expiring are skipped (SKIP LOCKED), and a row decided meanwhile is no longer pending.
 */
export async function expireDue(tx: Tx, limit: number): Promise<ApprovalRecord[]> {
  const rows = await tx.$queryRaw<{ a: Record<string, unknown> }[]>`
    UPDATE approvals p
       SET status = 'expired', decision = p.on_expiry, decided_at = p.expires_at,
           final_arguments = CASE WHEN p.on_expiry = 'approve' THEN p.arguments END
     WHERE p.message_id IN (
             SELECT message_id FROM approvals WHERE status = 'pending' AND expires_at <= now()
              ORDER BY expires_at LIMIT ${limit} FOR UPDATE SKIP LOCKED)
       AND p.status = 'pending'
    RETURNING to_jsonb(p) AS a`
  return recordsOf(rows)
}

/** When the next pending request expires; null when none is pending. */
export async function nextExpiry(pool: pg.Pool): Promise<Date | null> {
  const { rows } = await pool.query<{ at: Date | null }>({ name: 'approval-next-expiry', text: "SELECT min(expires_at) AS at FROM approvals WHERE status = 'pending'" })
  return rows[0]?.at ?? null
}

/**
 * Pending requests `userId` may decide, soonest expiry first: in channels it belongs to (and, for
 * the workspace owner, every regular channel), whose approvers are the members, the owner (when it
 * is the owner) or a list naming it.
 */
export async function pendingFor(pool: pg.Pool, userId: string, isOwner: boolean, limit: number): Promise<ApprovalRecord[]> {
  const { rows } = await pool.query<{ a: Record<string, unknown> }>({
    name: 'approval-pending-for',
    text: `SELECT to_jsonb(p) AS a FROM approvals p
            WHERE p.status = 'pending' AND p.expires_at > now()
              AND p.channel_id IN (SELECT channel_id FROM channel_members WHERE member_id = $1
                                   UNION SELECT id FROM channels WHERE $2::boolean AND type = 'channel')
              AND (p.approvers = '"members"'::jsonb OR ($2::boolean AND p.approvers = '"owner"'::jsonb) OR p.approvers @> jsonb_build_array($1::text))
            ORDER BY p.expires_at, p.message_id LIMIT $3`,
    values: [userId, isOwner, limit],
  })
  return recordsOf(rows)
}
