// Who an MCP exchange acts for, and the background re-check of everyone's credential. A caller is
// a 2025-era session (src/mcp/sessions.ts) or one 2026-era request (src/mcp/modern.ts); both are
// registered here while they are open, so a revoked key or an expired JWT ends a long wait, a
// notification stream or a session within MCP_AUTH_RECHECK_MS, on every instance.
import type { FastifyInstance } from 'fastify'
import type { MemberPrincipal } from '../modules/identity/principal.ts'

export interface McpCaller {
  /** A session's is refreshed by every authenticated request of the session. */
  principal: MemberPrincipal
  /** The last credential used, re-checked in the background. */
  credential: string
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
    let checking = false
    const timer = setInterval(() => {
      if (checking || !this.live.size) return
      checking = true
      void Promise.all(
        [...this.live].map(async (entry) => {
          const principal = await app.authenticate(entry.caller.credential).catch(() => undefined)
          if (principal !== null || !this.live.delete(entry)) return
          entry.revoked()
        }),
      ).finally(() => {
        checking = false
      })
    }, intervalMs).unref()
    return () => clearInterval(timer)
  }
}
