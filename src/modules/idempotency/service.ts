// Idempotency-Key support for creates (messages, channels, DMs). The remembered response is
// written in the same transaction as the thing it created, so a retry either finds it (and gets
// the original answer) or finds nothing and the create runs again: never two creates for a key.
// Keys are per caller and kept 24 hours; only successful creates are remembered.
import { createHash } from 'node:crypto'
import type { IncomingHttpHeaders } from 'node:http'
import type pg from 'pg'
import type { Tx } from '../../events/bus.ts'
import { AppError, badRequest } from '../../lib/errors.ts'
import * as repo from './repo.ts'

export const IDEMPOTENCY_HEADER = 'idempotency-key'
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000
const KEY_RE = /^[\x21-\x7e]{1,255}$/

export interface StoredResponse {
  statusCode: number
  body: unknown
}

/** A create's Idempotency-Key, handed to the create so that it remembers its response. */
export interface IdempotentCreate {
  principalId: string
  key: string
  hash: string
}

/** The request's Idempotency-Key (printable ASCII, 1 to 255 characters), or undefined. */
export function idempotencyKeyOf(request: { headers: IncomingHttpHeaders }): string | undefined {
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

const keyReused = (): AppError => new AppError('IDEMPOTENCY_KEY_REUSED', 'this Idempotency-Key was already used with a different request')

/**
 * The response remembered for (caller, key): replayed when the request is the same, 409 when
 * it differs. Null when the key is new (or expired, in which case it is forgotten now).
 */
async function findRemembered(pool: pg.Pool, principalId: string, key: string, hash: string): Promise<StoredResponse | null> {
  const row = await repo.findRemembered(pool, principalId, key)
  if (!row) return null
  if (Date.now() - row.created_at.getTime() > IDEMPOTENCY_TTL_MS) {
    await repo.forget(pool, principalId, key, row.created_at)
    return null
  }
  if (row.request_hash !== hash) throw keyReused()
  return { statusCode: row.status_code, body: row.response_body }
}

/** Whether a database error is the unique violation of idempotency_keys (a concurrent twin). */
function isIdempotencyConflict(error: unknown): boolean {
  const e = error as { code?: string; constraint?: string; meta?: { target?: unknown; driverAdapterError?: unknown }; message?: string }
  if (e?.code === '23505' && e.constraint === 'idempotency_keys_pkey') return true
  if (e?.code === 'P2002') return JSON.stringify(e.meta ?? {}).includes('idempotency_keys') || JSON.stringify(e.meta ?? {}).includes('principal_id')
  return false
}

/**
 * Runs a create under the caller's Idempotency-Key (none: just runs it). A key seen before with
 * the same request (`hash`, computed only when there is a key) answers the remembered response
 * without running `create`; with another request, 409 `IDEMPOTENCY_KEY_REUSED`. `create` gets
 * the key to remember its response with, in its own transaction; when a concurrent twin with the
 * same key committed first, the answer is the twin's. `onReplay` runs before a remembered
 * response is returned (to drop what the request brought along, such as an uploaded file).
 */
export async function withIdempotency(
  pool: pg.Pool,
  principalId: string,
  key: string | undefined,
  hash: () => string,
  create: (idempotent: IdempotentCreate | undefined) => Promise<StoredResponse>,
  onReplay?: () => Promise<unknown>,
): Promise<StoredResponse> {
  if (!key) return create(undefined)
  const idempotent = { principalId, key, hash: hash() }
  const remembered = await findRemembered(pool, principalId, key, idempotent.hash)
  if (remembered) {
    await onReplay?.()
    return remembered
  }
  try {
    return await create(idempotent)
  } catch (error) {
    if (isIdempotencyConflict(error)) {
      const twin = await findRemembered(pool, principalId, key, idempotent.hash)
      if (twin) {
        await onReplay?.()
        return twin
      }
    }
    throw error
  }
}

/** A response found by the create's own statement (a message post looks its key up while inserting). */
export interface FoundResponse {
  remembered: { requestHash: string; statusCode: number; body: unknown; createdAt: Date }
}

/**
 * Like withIdempotency, without the lookup before the create: `create` looks the key up in the
 * statement that inserts (src/modules/messages/repo.ts), and answers what it found instead of
 * creating. An expired response is forgotten and the create runs once more; another request
 * under the key is 409 `IDEMPOTENCY_KEY_REUSED`; a concurrent twin that committed first (the
 * unique violation) is answered as before.
 */
export async function withIdempotentInsert(
  pool: pg.Pool,
  principalId: string,
  key: string | undefined,
  hash: () => string,
  create: (idempotent: IdempotentCreate | undefined) => Promise<StoredResponse | FoundResponse>,
  onReplay?: () => Promise<unknown>,
): Promise<StoredResponse> {
  const idempotent = key ? { principalId, key, hash: hash() } : undefined
  try {
    for (let attempt = 0; ; attempt++) {
      const outcome = await create(idempotent)
      if (!('remembered' in outcome)) return outcome
      const row = outcome.remembered
      if (idempotent && attempt === 0 && Date.now() - row.createdAt.getTime() > IDEMPOTENCY_TTL_MS) {
        await repo.forget(pool, principalId, idempotent.key, row.createdAt)
        continue
      }
      if (row.requestHash !== idempotent?.hash) throw keyReused()
      await onReplay?.()
      return { statusCode: row.statusCode, body: row.body }
    }
  } catch (error) {
    if (idempotent && isIdempotencyConflict(error)) {
      const twin = await findRemembered(pool, principalId, idempotent.key, idempotent.hash)
      if (twin) {
        await onReplay?.()
        return twin
      }
    }
    throw error
  }
}

/** Remembers a create's response for its Idempotency-Key, in the create's own transaction. */
export async function rememberResponse(tx: Tx, idempotent: IdempotentCreate, response: StoredResponse): Promise<void> {
  await repo.rememberResponse(tx, idempotent.principalId, idempotent.key, idempotent.hash, response.statusCode, response.body)
}

/** Deletes remembered responses older than the TTL (src/workers/idempotency-sweeper.ts). */
export async function sweepExpired(pool: pg.Pool): Promise<void> {
  await repo.deleteOlderThan(pool, new Date(Date.now() - IDEMPOTENCY_TTL_MS))
}
