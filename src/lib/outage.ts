// Which failures mean "PostgreSQL is unreachable, stopped or not answering" rather than a bug:
// those answer 503 SERVICE_UNAVAILABLE with Retry-After (src/plugins/errors.ts), never 500, and
// never 401 because a credential could not be looked up. One classification for every path: the
// errors come from `pg` directly (raw hot paths) or wrapped by Prisma's driver adapter.
import { AppError } from './errors.ts'

/** Seconds a client is told to wait before retrying after an outage answer. */
export const OUTAGE_RETRY_AFTER_SECONDS = 5

// SQLSTATE: 08xxx connection exceptions, 53xxx insufficient resources (too many connections…),
// 57014 statement timeout (or cancel), 57P01-57P03 shutdown / crash / not accepting connections.
const SQLSTATE = /^(08|53|57014|57P0[1-3])/
// Socket errors of a connection to the database.
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN'])
// Prisma: can't reach the server, timed out, operations timed out, server closed the connection,
// timed out fetching a connection from the pool, an interactive transaction that could not start
// in time or outlived its time limit (P2028: Prisma rolls it back, so nothing was stored; seen
// when the database is overloaded or a lock holds the transaction).
const PRISMA_CODES = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024', 'P2028'])
// @prisma/adapter-pg's classification of the underlying error.
const ADAPTER_KINDS = new Set(['DatabaseNotReachable', 'ConnectionClosed', 'SocketTimeout', 'TooManyConnections'])
// node-postgres raises these as plain Errors without a code: the connection was lost, the
// connect timeout (pool option) or the query timeout (src/db/commit-guard.ts) ran out, or the
// pool is closed.
const PG_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|Query read timeout|connection lost while PostgreSQL was committing|is not queryable|Cannot use a pool after calling end/
// src/db/commit-guard.ts: a query cut off after its commit was asked for (Prisma keeps the
// message of an error it wraps, not its fields).
const OUTCOME_UNKNOWN = 'outcome unknown: it may have been committed'

interface ErrorLike {
  name?: unknown
  code?: unknown
  kind?: unknown
  originalCode?: unknown
  message?: unknown
  outcome?: unknown
  cause?: unknown
  errors?: unknown
  meta?: { driverAdapterError?: { cause?: unknown } }
}

function matches(e: ErrorLike): boolean {
  const code = typeof e.code === 'string' ? e.code : ''
  if (SOCKET_CODES.has(code)) return true
  if (typeof e.kind === 'string') {
    if (ADAPTER_KINDS.has(e.kind)) return true
    if (e.kind === 'postgres' && SQLSTATE.test(code)) return true
  }
  if (typeof e.originalCode === 'string' && SQLSTATE.test(e.originalCode)) return true
  if (e.name === 'PrismaClientKnownRequestError' || e.name === 'PrismaClientInitializationError') {
    if (PRISMA_CODES.has(code)) return true
  } else if (/^[0-9A-Z]{5}$/.test(code) && SQLSTATE.test(code)) {
    return true // a pg DatabaseError
  }
  return typeof e.message === 'string' && PG_MESSAGES.test(e.message)
}

/** True when `error` (or what it wraps) says the database cannot be reached or did not answer. */
export function isDatabaseOutage(error: unknown, depth = 0): boolean {
  if (!error || typeof error !== 'object' || depth > 4) return false
  const e = error as ErrorLike
  if (matches(e)) return true
  if (e.meta?.driverAdapterError && isDatabaseOutage(e.meta.driverAdapterError.cause, depth + 1)) return true
  if (Array.isArray(e.errors) && e.errors.some((inner) => isDatabaseOutage(inner, depth + 1))) return true
  return isDatabaseOutage(e.cause, depth + 1)
}

/** True when `error` (or what it wraps) is a write PostgreSQL may have committed after all. */
export function isOutcomeUnknown(error: unknown, depth = 0): boolean {
  if (!error || typeof error !== 'object' || depth > 4) return false
  const e = error as ErrorLike
  if (e.outcome === 'unknown' || (typeof e.message === 'string' && e.message.includes(OUTCOME_UNKNOWN))) return true
  if (e.meta?.driverAdapterError && isOutcomeUnknown(e.meta.driverAdapterError.cause, depth + 1)) return true
  if (Array.isArray(e.errors) && e.errors.some((inner) => isOutcomeUnknown(inner, depth + 1))) return true
  return isOutcomeUnknown(e.cause, depth + 1)
}

/**
 * The 503 answer for a database outage, or null when `error` is something else. A 503
 * SERVICE_UNAVAILABLE means nothing was stored; when PostgreSQL went silent while committing,
 * the answer is 503 OUTCOME_UNKNOWN instead (docs/errors.md): a retry with the same
 * Idempotency-Key is safe either way.
 */
export function outageError(error: unknown): AppError | null {
  if (!isDatabaseOutage(error)) return null
  const headers = { 'retry-after': String(OUTAGE_RETRY_AFTER_SECONDS) }
  if (isOutcomeUnknown(error)) {
    return new AppError('OUTCOME_UNKNOWN', 'the database stopped answering while saving this change, so whether it was saved is unknown; retry with the same Idempotency-Key', {
      headers,
      cause: error,
    })
  }
  return new AppError('SERVICE_UNAVAILABLE', 'the database is unavailable; retry shortly', { headers, cause: error })
}
