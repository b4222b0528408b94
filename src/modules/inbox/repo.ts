// SQL of the inbox (docs/realtime.md, "The inbox"): the items addressed to a member, written by the
// delivery planner (src/workers/repo.ts planBatch) and read, counted and acknowledged here.
import type pg from 'pg'

/** A channel's DM participants (null: a regular channel) and who started or posted in a thread. */
export async function conversationOf(pool: pg.Pool, channelId: string, threadId: string | null): Promise<{ exists: boolean; dmMembers: string[] | null; threadAuthors: string[] }> {
  const { rows } = await pool.query<{ dm_members: string[] | null; thread_authors: string[] | null }>({
    name: 'inbox-conversation-of',
    text: `SELECT CASE WHEN c.type = 'dm' THEN (SELECT array_agg(m.member_id::text) FROM channel_members m WHERE m.channel_id = c.id) END AS dm_members,
                  CASE WHEN $2::uuid IS NULL THEN NULL
                       ELSE (SELECT array_agg(DISTINCT t.author_id::text) FROM messages t WHERE t.channel_id = c.id AND (t.id = $2::uuid OR t.thread_id = $2::uuid)) END AS thread_authors
             FROM channels c WHERE c.id = $1::uuid`,
    values: [channelId, threadId],
  })
  const row = rows[0]
  return { exists: Boolean(row), dmMembers: row?.dm_members ?? null, threadAuthors: row?.thread_authors ?? [] }
}

// ---- the inbox: items of channels the member belongs to now, unacknowledged ----

export interface InboxRow {
  id: string
  kind: string
  event_id: string
  event_type: string
  channel_id: string
  occurred_at: Date
  body: { message: unknown; reaction: unknown; approval?: unknown; stop?: unknown }
}

/** Unacknowledged items oldest first, after `after`; `limit + 1` rows tell whether more follow. */
export async function unacknowledged(pool: pg.Pool, memberId: string, after: string | null, limit: number): Promise<InboxRow[]> {
  const { rows } = await pool.query<InboxRow>({
    name: 'inbox-items',
    text: `SELECT i.id::text, i.kind, i.event_id::text, i.event_type, i.channel_id::text, i.occurred_at, i.body
             FROM inbox_items i
             JOIN channel_members m ON m.channel_id = i.channel_id AND m.member_id = i.member_id
            WHERE i.member_id = $1::uuid AND i.acked_at IS NULL AND ($2::uuid IS NULL OR i.id > $2::uuid)
            ORDER BY i.id
            LIMIT $3`,
    values: [memberId, after, limit + 1],
  })
  return rows
}

/** Unacknowledged items per channel and kind, with the channel's name and type. */
export async function countUnacknowledged(pool: pg.Pool, memberId: string): Promise<{ channel_id: string; name: string; type: 'channel' | 'dm'; kind: string; n: number }[]> {
  const { rows } = await pool.query<{ channel_id: string; name: string; type: 'channel' | 'dm'; kind: string; n: number }>({
    name: 'inbox-counts',
    text: `SELECT i.channel_id::text, c.name, c.type::text AS type, i.kind, count(*)::int AS n
             FROM inbox_items i
             JOIN channel_members m ON m.channel_id = i.channel_id AND m.member_id = i.member_id
             JOIN channels c ON c.id = i.channel_id
            WHERE i.member_id = $1::uuid AND i.acked_at IS NULL
            GROUP BY i.channel_id, c.name, c.type, i.kind`,
    values: [memberId],
  })
  return rows
}

/** Acknowledges the member's items up to `upTo` (included) or with these ids; returns how many. */
export async function acknowledge(pool: pg.Pool, memberId: string, which: { upTo: string } | { ids: string[] }): Promise<number> {
  const { rowCount } =
    'upTo' in which
      ? await pool.query('UPDATE inbox_items SET acked_at = now() WHERE member_id = $1::uuid AND acked_at IS NULL AND id <= $2::uuid', [memberId, which.upTo])
      : await pool.query('UPDATE inbox_items SET acked_at = now() WHERE member_id = $1::uuid AND acked_at IS NULL AND id = ANY($2::uuid[])', [memberId, which.ids])
  return rowCount ?? 0
}

/**
 * A person read a conversation up to `messageId`: the items of its messages up to there that a
 * person reads by reading the conversation (mentions, DM messages) are acknowledged. Reactions
 * and thread replies stay. (The planner writes an item already acknowledged when the marker had
 * passed its message before it was planned: src/workers/repo.ts insertInboxItems.)
 */
export async function acknowledgeRead(pool: pg.Pool, memberId: string, channelId: string, messageId: string): Promise<number> {
  const { rowCount } = await pool.query({
    name: 'inbox-ack-read',
    text: `UPDATE inbox_items SET acked_at = now()
            WHERE member_id = $1::uuid AND acked_at IS NULL AND channel_id = $2::uuid
              AND kind IN ('mention', 'dm') AND (body->'message'->>'id')::uuid <= $3::uuid`,
    values: [memberId, channelId, messageId],
  })
  return rowCount ?? 0
}
