// What the re-check of held credentials reads (./held.ts): two batched statements, however many
// connections are open.
import type pg from 'pg'
import type { ReadOnly } from '../../db/commit-guard.ts'
import { uuidArray } from '../../db/params.ts'

/** Of the given API key ids, those that no longer hold (revoked or deleted): usually none, so no row comes back. */
export async function deadApiKeyIds(pool: pg.Pool, keyIds: string[]): Promise<Set<string>> {
  if (!keyIds.length) return new Set()
  const statement: pg.QueryConfig<[string | readonly string[]]> & ReadOnly = {
    text: 'SELECT k::text AS id FROM unnest($1::uuid[]) AS k WHERE NOT EXISTS (SELECT 1 FROM api_keys a WHERE a.id = k AND a.revoked_at IS NULL)',
    values: [uuidArray(keyIds)],
    readOnly: true,
  }
  const { rows } = await pool.query<{ id: string }>(statement)
  return new Set(rows.map((r) => r.id))
}

/** The active users among `userIds`, with their session version (a password change increments it). */
export async function activeUserSessions(pool: pg.Pool, userIds: string[]): Promise<Map<string, number>> {
  if (!userIds.length) return new Map()
  const statement: pg.QueryConfig<[string | readonly string[]]> & ReadOnly = {
    text: "SELECT id::text, session_version FROM users WHERE id = ANY($1::uuid[]) AND status = 'active'",
    values: [uuidArray(userIds)],
    readOnly: true,
  }
  const { rows } = await pool.query<{ id: string; session_version: number }>(statement)
  return new Map(rows.map((r) => [r.id, r.session_version]))
}
