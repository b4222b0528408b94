// What the re-check of held credentials reads (./held.ts): two batched statements, however many
// connections are open.
import type pg from 'pg'
import type { ReadOnly } from '../../db/commit-guard.ts'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/**
 * A uuid[] parameter as one array literal. node-postgres escapes an array parameter element by
 * element in JavaScript; with 10,000 sockets held, that was the larger part of each re-check.
 * Ids read from the database need no escaping; anything else goes the escaped way.
 */
function uuidArray(ids: string[]): string | string[] {
  return ids.every((id) => UUID.test(id)) ? `{${ids.join(',')}}` : ids
}

/** Of the given API key ids, those that no longer hold (revoked or deleted): usually none, so no row comes back. */
export async function deadApiKeyIds(pool: pg.Pool, keyIds: string[]): Promise<Set<string>> {
  if (!keyIds.length) return new Set()
  const statement: pg.QueryConfig<[string | string[]]> & ReadOnly = {
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
  const statement: pg.QueryConfig<[string | string[]]> & ReadOnly = {
    text: "SELECT id::text, session_version FROM users WHERE id = ANY($1::uuid[]) AND status = 'active'",
    values: [uuidArray(userIds)],
    readOnly: true,
  }
  const { rows } = await pool.query<{ id: string; session_version: number }>(statement)
  return new Map(rows.map((r) => [r.id, r.session_version]))
}
