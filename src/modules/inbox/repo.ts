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
