// Periodic re-check of the credentials of open sockets: a revoked key, a deleted agent or user,
// a deactivated account, an expired JWT or one issued before a password change closes its sockets with 4401 ("do not reconnect with
// this credential"). Two batched queries per run, however many sockets.
import type pg from 'pg'
import { CLOSE_CREDENTIAL_INVALID, type Connection } from './connection.ts'
import { activeUserSessions, liveApiKeyIds } from './repo.ts'

/** Closes the sockets among `open` whose credential is no longer valid. */
export async function recheckCredentials(pool: pg.Pool, open: Iterable<Connection>): Promise<void> {
  // Judge only the sockets open when the query was made: one that connects while it runs was
  // authenticated just now, and its key is not in the answer.
  const checked = [...open]
  const keyIds = new Set<string>()
  const userIds = new Set<string>()
  for (const { principal } of checked) {
    if (principal.kind === 'agent') keyIds.add(principal.keyId)
    else userIds.add(principal.id)
  }
  if (!keyIds.size && !userIds.size) return
  const [liveKeys, activeUsers] = await Promise.all([liveApiKeyIds(pool, [...keyIds]), activeUserSessions(pool, [...userIds])])
  const now = Date.now()
  for (const conn of checked) {
    const { principal, expiresAt, sessionVersion } = conn.credential
    const valid = principal.kind === 'agent' ? liveKeys.has(principal.keyId) : activeUsers.get(principal.id) === (sessionVersion ?? 0) && (expiresAt === null || expiresAt > now)
    if (!valid) conn.socket.close(CLOSE_CREDENTIAL_INVALID, 'credential revoked or expired')
  }
}

/** Runs the re-check every `intervalMs`, never two at once; returns the timer. */
export function scheduleCredentialChecks(pool: pg.Pool, open: Iterable<Connection>, intervalMs: number, onError: (error: unknown) => void): NodeJS.Timeout {
  let checking = false
  return setInterval(() => {
    if (checking) return
    checking = true
    recheckCredentials(pool, open)
      .catch(onError)
      .finally(() => {
        checking = false
      })
  }, intervalMs)
}
