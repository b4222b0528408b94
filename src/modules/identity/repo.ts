// What the re-check of held credentials reads (./held.ts): two batched statements, however many
// connections are open.
import type pg from 'pg'

/** Of the given API key ids, those that still exist and are not revoked. */
export async function liveApiKeyIds(pool: pg.Pool, keyIds: string[]): Promise<Set<string>> {
  if (!keyIds.length) return new Set()
  const { rows } = await pool.query<{ id: string }>('SELECT id::text FROM api_keys WHERE id = ANY($1::uuid[]) AND revoked_at IS NULL', [keyIds])
  return new Set(rows.map((r) => r.id))
}

/** The active users among `userIds`, with their session version (a password change increments it). */
export async function activeUserSessions(pool: pg.Pool, userIds: string[]): Promise<Map<string, number>> {
  if (!userIds.length) return new Map()
  const { rows } = await pool.query<{ id: string; session_version: number }>("SELECT id::text, session_version FROM users WHERE id = ANY($1::uuid[]) AND status = 'active'", [userIds])
  return new Map(rows.map((r) => [r.id, r.session_version]))
}
