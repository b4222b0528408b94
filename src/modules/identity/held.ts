// The credentials of connections held open (WebSockets, event streams, long polls, MCP sessions
// and waits): one re-check for all of them. A revoked key, a deleted or deactivated account, an
// expired JWT or one issued before a password change stops holding; each holder then ends its
// connection its own way (a close code, an error event, an answer).
import type pg from 'pg'
import type { MemberPrincipal } from './principal.ts'
import { activeUserSessions, deadApiKeyIds } from './repo.ts'

/** Who holds a connection, and what of the credential it opened with the re-check needs. */
export interface HeldCredential {
  principal: MemberPrincipal
  /** A JWT's expiry (epoch ms); null for agent keys. */
  expiresAt: number | null
  /** A JWT's session version (a password change ends older sessions); null for agent keys. */
  sessionVersion: number | null
}

/**
 * Of the holders, those whose credential no longer holds, as of `now`: two batched statements,
 * however many. Judge only the holders given: one that connects meanwhile was authenticated
 * just now. A failed query throws (a database outage is not a revocation).
 */
export async function revokedHolders<T extends { credential: HeldCredential }>(pool: pg.Pool, holders: readonly T[], now = Date.now()): Promise<T[]> {
  const keyIds = new Set<string>()
  const userIds = new Set<string>()
  for (const { credential } of holders) {
    if (credential.principal.kind === 'agent') keyIds.add(credential.principal.keyId)
    else userIds.add(credential.principal.id)
  }
  if (!keyIds.size && !userIds.size) return []
  const [deadKeys, activeUsers] = await Promise.all([deadApiKeyIds(pool, [...keyIds]), activeUserSessions(pool, [...userIds])])
  return holders.filter(({ credential: { principal, expiresAt, sessionVersion } }) =>
    principal.kind === 'agent' ? deadKeys.has(principal.keyId) : activeUsers.get(principal.id) !== (sessionVersion ?? 0) || (expiresAt !== null && expiresAt <= now),
  )
}

/** Runs `recheck` every `intervalMs`, never two at once; its failure goes to `onError`. Answers the timer. */
export function recheckEvery(intervalMs: number, recheck: () => Promise<void>, onError: (error: unknown) => void): NodeJS.Timeout {
  let checking = false
  const timer = setInterval(() => {
    if (checking) return
    checking = true
    recheck()
      .catch(onError)
      .finally(() => {
        checking = false
      })
  }, intervalMs)
  timer.unref()
  return timer
}
