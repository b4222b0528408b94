// Database access of Idempotency-Key support: the remembered responses in idempotency_keys.
// (A message post writes its row in the message's own statement: src/modules/messages/repo.ts.)
import type pg from 'pg'
import type { Prisma } from '../../db/client.ts'

export interface RememberedRow {
  request_hash: string
  status_code: number
  response_body: unknown
  created_at: Date
}

/** The response remembered for (caller, key), expired or not. */
export async function findRemembered(pool: pg.Pool, principalId: string, key: string): Promise<RememberedRow | undefined> {
  const { rows } = await pool.query<RememberedRow>('SELECT request_hash, status_code, response_body, created_at FROM idempotency_keys WHERE principal_id = $1 AND key = $2', [principalId, key])
  return rows[0]
}

/** Forgets one remembered response (only the one created at `createdAt`, not a newer twin). */
export async function forget(pool: pg.Pool, principalId: string, key: string, createdAt: Date): Promise<void> {
  await pool.query('DELETE FROM idempotency_keys WHERE principal_id = $1 AND key = $2 AND created_at = $3', [principalId, key, createdAt])
}

/** Remembers a create's response for its Idempotency-Key, in the create's own transaction. */
export function rememberResponse(tx: Prisma.TransactionClient, principalId: string, key: string, hash: string, statusCode: number, body: unknown) {
  return tx.idempotencyKey.create({ data: { principalId, key, requestHash: hash, statusCode, responseBody: body as Prisma.InputJsonValue } })
}

/** Deletes the responses remembered before `before`. */
export async function deleteOlderThan(pool: pg.Pool, before: Date): Promise<void> {
  await pool.query('DELETE FROM idempotency_keys WHERE created_at < $1', [before])
}
