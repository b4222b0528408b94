// The 2025-era protocol revisions (2024-11-05 … 2025-11-25) on /mcp: sessions opened by
// `initialize`, named by `Mcp-Session-Id`, served by the SDK's sessionful Streamable HTTP
// transport with resumable SSE (src/mcp/event-store.ts), `resources/subscribe` notifications on the
// session's GET stream, and DELETE to end a session. The SDK answers every protocol error itself
// (a request without a session, a malformed body, a wrong protocol version); this file only finds
// the caller's session, opens new ones within the limits (src/mcp/sessions.ts) and closes them.
import { randomUUID } from 'node:crypto'
import { isInitializeRequest, WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { AppError, notFound } from '../lib/errors.ts'
import { bearer, heldCredential } from '../plugins/auth.ts'
import type { HeldCredential } from '../modules/identity/held.ts'
import type { MemberPrincipal } from '../modules/identity/principal.ts'
import type { LiveCallers } from './caller.ts'
import { SessionEventStore } from './event-store.ts'
import { jsonRpcError, requestIdOf } from './http.ts'
import type { Inbox } from './inbox.ts'
import { createMcpServer } from './server.ts'
import { SessionRegistry, type McpSession } from './sessions.ts'
import type { ChannelWatchers } from './watchers.ts'

export const SESSION_HEADER = 'mcp-session-id'
/** The SDK's JSON-RPC code for an unknown session (2025-era); other refusals use -32000. */
const SESSION_NOT_FOUND = -32_001
const SERVER_ERROR = -32_000
/** How long a closing session's requests in progress get to answer. */
const CLOSE_GRACE_MS = 2_000

export interface LegacyDeps {
  app: FastifyInstance
  inbox: Inbox
  watchers: ChannelWatchers
  live: LiveCallers
}

export interface LegacyMcp {
  sessions: SessionRegistry
  /** Serves one 2025-era request (POST, GET or DELETE) of an authenticated caller. */
  handle: (request: FastifyRequest, reply: FastifyReply, web: Request, body: unknown) => Promise<Response>
  close: () => Promise<void>
}

/** An `initialize` (alone, or as the single element of a batch) opens a session. */
const opensSession = (body: unknown): boolean => isInitializeRequest(body) || (Array.isArray(body) && body.length === 1 && isInitializeRequest(body[0]))

export function legacyMcp({ app, inbox, watchers, live }: LegacyDeps): LegacyMcp {
  const { config } = app
  const sessions = new SessionRegistry({ max: config.mcpMaxSessions, perCaller: config.mcpMaxSessionsPerCaller, idleMs: config.mcpSessionIdleMs })
  const detach = new WeakMap<McpSession, () => void>()
  const transportOptions = { keepAliveMs: config.sseKeepaliveMs, maxRequestBodySize: config.bodyLimitBytes }

  function remove(session: McpSession): void {
    sessions.remove(session)
    detach.get(session)?.()
  }

  /** Closes a session from our side: its requests in progress get a moment to answer first. */
  function close(session: McpSession, why: string): void {
    app.log.info({ sessionId: session.id, principalId: session.principal.id }, `closing MCP session: ${why}`)
    remove(session)
    const deadline = Date.now() + CLOSE_GRACE_MS
    const finish = (): void => {
      if (session.inFlight > 0 && Date.now() < deadline) return void setTimeout(finish, 20).unref()
      session.transport.close().catch(() => {})
    }
    finish()
  }

  async function open(principal: MemberPrincipal, credential: string, held: HeldCredential): Promise<McpSession> {
    await sessions.makeRoom(principal)
    const session = {
      id: '',
      principal,
      credential,
      held,
      inFlight: 0,
      streams: 0,
      lastActive: Date.now(),
      subscriptions: new Set<string>(),
      closed: new AbortController(),
      events: new SessionEventStore(),
    } as Omit<McpSession, 'transport' | 'server'> as McpSession
    session.transport = new WebStandardStreamableHTTPServerTransport({
      ...transportOptions,
      sessionIdGenerator: () => randomUUID(),
      eventStore: session.events,
      onsessioninitialized: (id) => {
        session.id = id
        sessions.add(session)
        const unwatch = watchers.add({ caller: session, channels: session.subscriptions, notify: (uri) => session.server.sendResourceUpdated({ uri }) })
        const unlive = live.add({ caller: session, revoked: () => close(session, 'credential revoked or expired') })
        detach.set(session, () => {
          unwatch()
          unlive()
        })
      },
    })
    // Set before connect(): the server chains its own close handler after this one.
    session.transport.onclose = () => remove(session)
    session.server = createMcpServer({ app, inbox, caller: session, subscriptions: session.subscriptions })
    await session.server.connect(session.transport)
    return session
  }

  async function handle(request: FastifyRequest, reply: FastifyReply, web: Request, body: unknown): Promise<Response> {
    const principal = request.principal as MemberPrincipal
    const credential = bearer(request)!
    const held = heldCredential(app, principal, credential)
    const id = request.headers[SESSION_HEADER]
    const kind = request.method === 'GET' ? 'stream' : 'request'
    if (typeof id === 'string' && id) {
      const session = sessions.get(id)
      // Another caller's session is unknown to this one.
      if (!session || session.principal.id !== principal.id) {
        return jsonRpcError(notFound('MCP session (it expired or was closed: initialize a new one)'), SESSION_NOT_FOUND, requestIdOf(body))
      }
      session.principal = principal
      session.credential = credential
      session.held = held
      sessions.track(session, reply.raw, kind)
      return session.transport.handleRequest(web, { parsedBody: body })
    }
    if (request.method === 'POST' && opensSession(body)) {
      let session: McpSession
      try {
        session = await open(principal, credential, held)
      } catch (error) {
        if (error instanceof AppError) return jsonRpcError(error, SERVER_ERROR, requestIdOf(body))
        throw error
      }
      sessions.track(session, reply.raw, kind)
      const response = await session.transport.handleRequest(web, { parsedBody: body })
      // The SDK did not start a session (a malformed initialize): nothing to keep.
      if (!session.id) await session.transport.close()
      return response
    }
    // Anything else without a session is the SDK's to refuse (not initialized, not JSON, …).
    const transport = new WebStandardStreamableHTTPServerTransport({ ...transportOptions, sessionIdGenerator: () => randomUUID() })
    try {
      return await transport.handleRequest(web, { parsedBody: body })
    } finally {
      await transport.close()
    }
  }

  const idleTimer = setInterval(
    () => {
      for (const session of sessions.idle()) close(session, 'idle')
    },
    Math.min(60_000, Math.max(250, Math.floor(config.mcpSessionIdleMs / 4))),
  ).unref()

  return {
    sessions,
    handle,
    async close() {
      clearInterval(idleTimer)
      await Promise.all(sessions.all().map((s) => s.transport.close().catch(() => {})))
    },
  }
}
