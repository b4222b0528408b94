// Open MCP sessions of this instance (2025-era revisions only: 2026-07-28 has no sessions). A
// session belongs to the principal that opened it: another credential of the same user or agent
// may continue it, anyone else gets 404 as for an unknown session. Limits: MCP_MAX_SESSIONS in all, MCP_MAX_SESSIONS_PER_CALLER per user or agent (a new
// one replaces that caller's least recently used session without a request in progress, or is
// refused with 429 when all are busy), and sessions with no request and no open stream for
// MCP_SESSION_IDLE_MS are closed.
import type { Server, WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server'
import type { ServerResponse } from 'node:http'
import { AppError } from '../lib/errors.ts'
import type { MemberPrincipal } from '../modules/identity/principal.ts'
import type { McpCaller } from './caller.ts'
import type { SessionEventStore } from './event-store.ts'

export interface McpSession extends McpCaller {
  id: string
  transport: WebStandardStreamableHTTPServerTransport
  server: Server
  /** What the session's SSE streams sent, for resumption with Last-Event-ID. */
  events: SessionEventStore
  /** POST and DELETE requests in progress (a long wait_for_events is one). */
  inFlight: number
  /** Open GET streams (server notifications). */
  streams: number
  /** When a request last started or ended. */
  lastActive: number
  /** Ids of the channels whose resource the client subscribed to. */
  subscriptions: Set<string>
}

export interface SessionLimits {
  max: number
  perCaller: number
  idleMs: number
}

export class SessionRegistry {
  private readonly sessions = new Map<string, McpSession>()

  constructor(private readonly limits: SessionLimits) {}

  get size(): number {
    return this.sessions.size
  }

  all(): McpSession[] {
    return [...this.sessions.values()]
  }

  get(id: string): McpSession | undefined {
    return this.sessions.get(id)
  }

  add(session: McpSession): void {
    this.sessions.set(session.id, session)
  }

  remove(session: McpSession): void {
    if (this.sessions.get(session.id) === session) this.sessions.delete(session.id)
    session.closed.abort()
  }

  /** Counts a response as open until it ends. */
  track(session: McpSession, res: ServerResponse, kind: 'request' | 'stream'): void {
    const field = kind === 'request' ? 'inFlight' : 'streams'
    session[field] += 1
    if (kind === 'request') session.lastActive = Date.now()
    res.once('close', () => {
      session[field] -= 1
      if (kind === 'request') session.lastActive = Date.now()
    })
  }

  /**
   * Makes room for a new session of `principal`: at its limit, closes its least recently used
   * session with no request in progress (an open notification stream does not count: clients keep
   * one for the whole session); throws 429 when all of them are busy, 503 when the instance is full.
   */
  async makeRoom(principal: MemberPrincipal): Promise<void> {
    const mine = this.all().filter((s) => s.principal.id === principal.id)
    if (mine.length >= this.limits.perCaller) {
      const idle = mine.filter((s) => s.inFlight === 0).sort((a, b) => a.lastActive - b.lastActive)[0]
      if (!idle) {
        throw new AppError('RATE_LIMITED', `at most ${this.limits.perCaller} MCP sessions per caller, all in use; close one (DELETE /mcp) or retry later`, { headers: { 'retry-after': '30' } })
      }
      await idle.transport.close()
      this.remove(idle)
    }
    if (this.sessions.size >= this.limits.max) {
      throw new AppError('SERVICE_UNAVAILABLE', 'this server has no room for another MCP session; retry later', { headers: { 'retry-after': '30' } })
    }
  }

  /** Sessions with nothing open (no request, no stream) and no request for the idle limit. */
  idle(now = Date.now()): McpSession[] {
    return this.all().filter((s) => s.inFlight === 0 && s.streams === 0 && now - s.lastActive >= this.limits.idleMs)
  }
}
