// Who an MCP exchange acts for, and the background re-check of everyone's credential. A caller is
// a 2025-era session (src/mcp/sessions.ts) or one 2026-era request (src/mcp/modern.ts); both are
// registered here while they are open, so a revoked key or an expired JWT ends a long wait, a
// notification stream or a session within MCP_AUTH_RECHECK_MS, on every instance.
import type { FastifyInstance } from 'fastify'
import { recheckEvery, revokedHolders, type HeldCredential } from '../modules/identity/held.ts'
import type { MemberPrincipal } from '../modules/identity/principal.ts'

export interface McpCaller {
  /** A session's is refreshed by every authenticated request of the session. */
  principal: MemberPrincipal
  /** The last credential used (the token, passed on to the MCP SDK as its auth info). */
  credential: string
  /** The same, as the background re-check reads it (src/modules/identity/held.ts). */
  held: HeldCredential
  /** Aborted when the session or request ends, or its credential is no longer valid: ends waits. */
  closed: AbortController
}

export interface LiveCaller {
  caller: McpCaller
  /** Called once when the credential stops being valid. */
  revoked: () => void
}

export class LiveCallers {
  private readonly live = new Set<LiveCaller>()

  get size(): number {
    return this.live.size
  }

  /** Registers an open caller; the function returned unregisters it. */
  add(entry: LiveCaller): () => void {
    this.live.add(entry)
    return () => void this.live.delete(entry)
  }

  /**
   * Re-checks every open caller's credential every `intervalMs` (one check at a time); a caller
   * whose credential no longer authenticates is unregistered and told. A failed check (database
   * down) is not a revocation.
   */
  startRecheck(app: FastifyInstance, intervalMs: number): () => void {
    const recheck = async (): Promise<void> => {
      if (!this.live.size) return
      const held = [...this.live].map((entry) => ({ entry, credential: entry.caller.held }))
      for (const { entry } of await revokedHolders(app.db.pool, held)) if (this.live.delete(entry)) entry.revoked()
    }
    const timer = recheckEvery(intervalMs, recheck, (error) => app.log.warn({ err: error }, 'credential re-check of MCP callers failed'))
    return () => clearInterval(timer)
  }
}
