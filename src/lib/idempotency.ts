// Idempotency-Key support for creates (messages, channels, DMs). The remembered response is
// written in the same transaction as the thing it created, so a retry either finds it (and gets
// the original answer) or finds nothing and the create runs again: never two creates for a key.
// Keys are per caller and kept 24 hours; only successful creates are remembered.
import { createHash } from 'node:crypto'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { AppError, badRequest } from './errors.ts'

export const IDEMPOTENCY_HEADER = 'idempotency-key'
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000
const KEY_RE = /^[\x21-\x7e]{1,255}$/

export interface StoredResponse {
  statusCode: number
  body: unknown
}

/** The request's Idempotency-Key (printable ASCII, 1 to 255 characters), or undefined. */
export function idempotencyKeyOf(request: FastifyRequest): string | undefined {
  const raw = request.headers[IDEMPOTENCY_HEADER]
  if (raw === undefined) return undefined
  const value = Array.isArray(raw) ? raw[0] : raw
  if (!value || !KEY_RE.test(value)) throw badRequest('Idempotency-Key must be 1 to 255 printable ASCII characters without spaces')
  return value
}

/** Fingerprint of what a request asks for: the operation and its inputs. */
export function requestHash(...parts: unknown[]): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex')
}

export const keyReused = (): AppError =>
  new AppError('IDEMPOTENCY_KEY_REUSED', 'this Idempotency-Key was already used with a different request')

/**
 * The response remembered for (caller, key): replayed when the request is the same, 409 when
 * it differs. Null when the key is new (or expired, in which case it is forgotten now).
 */
export async function findRemembered(app: FastifyInstance, principalId: string, key: string, hash: string): Promise<StoredResponse | null> {
  const { rows } = await app.db.pool.query<{ request_hash: string; status_code: number; response_body: unknown; created_at: Date }>(
    'SELECT request_hash, status_code, response_body, created_at FROM idempotency_keys WHERE principal_id = $1 AND key = $2',
    [principalId, key],
  )
  const row = rows[0]
  if (!row) return null
  if (Date.now() - row.created_at.getTime() > IDEMPOTENCY_TTL_MS) {
    await app.db.pool.query('DELETE FROM idempotency_keys WHERE principal_id = $1 AND key = $2 AND created_at = $3', [principalId, key, row.created_at])
    return null
  }
  if (row.request_hash !== hash) throw keyReused()
  return { statusCode: row.status_code, body: row.response_body }
}

/** Whether a database error is the unique violation of idempotency_keys (a concurrent twin). */
export function isIdempotencyConflict(error: unknown): boolean {
  const e = error as { code?: string; constraint?: string; meta?: { target?: unknown; driverAdapterError?: unknown }; message?: string }
  if (e?.code === '23505' && e.constraint === 'idempotency_keys_pkey') return true
  if (e?.code === 'P2002') return JSON.stringify(e.meta ?? {}).includes('idempotency_keys') || JSON.stringify(e.meta ?? {}).includes('principal_id')
  return false
}

/** Deletes remembered responses older than the TTL (called now and then by writers). */
export async function sweepExpired(app: FastifyInstance): Promise<void> {
  await app.db.pool.query('DELETE FROM idempotency_keys WHERE created_at < $1', [new Date(Date.now() - IDEMPOTENCY_TTL_MS)])
}
