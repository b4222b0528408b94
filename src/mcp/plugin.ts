// The MCP endpoint: `/mcp` in this Fastify process, Streamable HTTP transport of the official SDK
// with sessions and resumable SSE (docs/mcp.md). Authentication is the API's own: the route's
// policy is 'any' (an agent key `svc_…` or a human JWT), checked by the auth plugin's onRequest
// hook on every request before the SDK sees it, so bad credentials get 401 {error, code} and a
// revoked key is refused on its next call. Open streams and long waits are cut by a background
// re-check of each session's credential. Every request also counts against the workspace rate
// limit (src/plugins/rate-limit.ts), like any API request.
import { randomUUID } from 'node:crypto'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { badRequest, notFound } from '../lib/errors.ts'
import { readableChannel } from '../modules/channels/access.ts'
import { bearer, type MemberPrincipal } from '../plugins/auth.ts'
import type { LogEntry } from '../realtime/broker.ts'
import { isClientEvent } from '../realtime/frames.ts'
import { SessionEventStore } from './event-store.ts'
import { Inbox } from './inbox.ts'
import { CHANNEL_URI_PREFIX, createMcpServer } from './server.ts'
import { SessionRegistry, type McpSession } from './sessions.ts'

export const MCP_PATH = '/mcp'
const SESSION_HEADER = 'mcp-session-id'
/** Resource-updated notifications of a channel are coalesced over this window. */
const UPDATE_COALESCE_MS = 250
/** How long a closing session's requests in progress get to answer. */
const CLOSE_GRACE_MS = 2_000

declare module 'fastify' {
  interface FastifyInstance {
    mcp: { sessions: SessionRegistry; inbox: Inbox }
  }
}

async function mcpPlugin(app: FastifyInstance): Promise<void> {
  const { config } = app
  const sessions = new SessionRegistry({ max: config.mcpMaxSessions, perCaller: config.mcpMaxSessionsPerCaller, idleMs: config.mcpSessionIdleMs })
  const inbox = new Inbox()
  app.decorate('mcp', { sessions, inbox })

  const pendingUpdates = new WeakMap<McpSession, Set<string>>()

  /** Tells subscribed sessions that a channel changed, once its reader may still read it. */
  function channelChanged(session: McpSession, channelId: string, entry: LogEntry): void {
    let pending = pendingUpdates.get(session)
    if (!pending) pendingUpdates.set(session, (pending = new Set()))
    if (pending.has(channelId)) return
    pending.add(channelId)
    setTimeout(() => {
      pending.delete(channelId)
      if (!session.subscriptions.has(channelId)) return
      // Membership is checked for every notification, not only at subscribe time.
      readableChannel(app, session.principal, channelId)
        .then(
          () => session.server.sendResourceUpdated({ uri: `${CHANNEL_URI_PREFIX}${channelId}` }),
          () => {
            session.subscriptions.delete(channelId)
            // The member was removed (or the channel deleted): the event addressed to it says so once.
            if (entry.event.audience?.includes(session.principal.id)) return session.server.sendResourceUpdated({ uri: `${CHANNEL_URI_PREFIX}${channelId}` })
          },
        )
        .catch((error: unknown) => app.log.debug({ err: error }, 'MCP resource notification not sent'))
    }, UPDATE_COALESCE_MS).unref()
  }

  app.realtime.broker.onEntries((entries) => {
    inbox.dispatch(entries)
    for (const session of sessions.all()) {
      if (!session.subscriptions.size) continue
      for (const entry of entries) {
        if (isClientEvent(entry.event) && session.subscriptions.has(entry.event.channelId!)) channelChanged(session, entry.event.channelId!, entry)
      }
    }
  })

  async function openSession(principal: MemberPrincipal, credential: string): Promise<McpSession> {
    await sessions.makeRoom(principal)
    const session = {
      id: '',
      principal,
      credential,
      inFlight: 0,
      streams: 0,
      lastActive: Date.now(),
      subscriptions: new Set<string>(),
      closed: new AbortController(),
      events: new SessionEventStore(),
    } as Omit<McpSession, 'transport' | 'server'> as McpSession
    session.transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      eventStore: session.events,
      onsessioninitialized: (id) => {
        session.id = id
        sessions.add(session)
      },
    })
    // Set before connect(): the server chains its own close handler after this one.
    session.transport.onclose = () => sessions.remove(session)
    session.server = createMcpServer({ app, inbox, session })
    await session.server.connect(session.transport)
    return session
  }

  /** The session a request names, if it is the caller's; 404 otherwise (as for an unknown one). */
  function sessionOf(request: FastifyRequest): McpSession {
    const id = request.headers[SESSION_HEADER]
    if (typeof id !== 'string' || !id) throw badRequest(`the ${SESSION_HEADER} header is missing: start with an initialize request`)
    const session = sessions.get(id)
    const principal = request.principal as MemberPrincipal
    if (!session || session.principal.id !== principal.id) throw notFound('MCP session (it expired or was closed: initialize a new one)')
    session.principal = principal
    session.credential = bearer(request) ?? session.credential
    return session
  }

  /** Hands the request to the SDK transport; the reply is the SDK's from here on. */
  async function handOver(session: McpSession, request: FastifyRequest, reply: FastifyReply, body?: unknown): Promise<void> {
    sessions.track(session, reply.raw, request.method === 'GET' ? 'stream' : 'request')
    reply.hijack()
    try {
      await session.transport.handleRequest(request.raw, reply.raw, body)
    } catch (error) {
      request.log.error({ err: error }, 'MCP transport failed')
      if (!reply.raw.headersSent) reply.raw.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'internal server error', code: 'INTERNAL_ERROR' }))
      else reply.raw.destroy()
    }
  }

  // A base64 file of MAX_FILE_BYTES grows by 4/3 inside the JSON-RPC body.
  const bodyLimit = Math.ceil(config.maxFileBytes / 3) * 4 + config.bodyLimitBytes
  const route = { config: { auth: 'any' as const }, schema: { hide: true } }

  app.post(MCP_PATH, { ...route, bodyLimit }, async (request, reply) => {
    if (request.headers[SESSION_HEADER] !== undefined) return handOver(sessionOf(request), request, reply, request.body)
    if (!isInitializeRequest(request.body)) throw badRequest(`no ${SESSION_HEADER} header: the first request of a session must be initialize`)
    const session = await openSession(request.principal as MemberPrincipal, bearer(request)!)
    await handOver(session, request, reply, request.body)
    // The SDK did not start a session (a malformed initialize): nothing to keep.
    if (!session.id) await session.transport.close()
  })

  app.get(MCP_PATH, route, async (request, reply) => handOver(sessionOf(request), request, reply))

  app.delete(MCP_PATH, route, async (request, reply) => handOver(sessionOf(request), request, reply))

  // Background: idle sessions expire; each session's credential is re-checked (revoked → closed).
  // Removing the session aborts its waits, which answer (a revoked credential: an UNAUTHORIZED
  // tool error) before the transport closes their streams.
  const close = (session: McpSession, why: string): void => {
    app.log.info({ sessionId: session.id, principalId: session.principal.id }, `closing MCP session: ${why}`)
    sessions.remove(session)
    const deadline = Date.now() + CLOSE_GRACE_MS
    const finish = (): void => {
      if (session.inFlight > 0 && Date.now() < deadline) return void setTimeout(finish, 20).unref()
      session.transport.close().catch(() => {})
    }
    finish()
  }
  const idleTimer = setInterval(
    () => {
      for (const session of sessions.idle()) close(session, 'idle')
    },
    Math.min(60_000, Math.max(250, Math.floor(config.mcpSessionIdleMs / 4))),
  ).unref()
  let checking = false
  const recheckTimer = setInterval(() => {
    if (checking || !sessions.size) return
    checking = true
    void Promise.all(
      sessions.all().map(async (session) => {
        const principal = await app.authenticate(session.credential).catch(() => undefined)
        if (principal === null) close(session, 'credential revoked or expired')
      }),
    ).finally(() => {
      checking = false
    })
  }, config.mcpAuthRecheckMs).unref()

  app.addHook('preClose', async () => {
    clearInterval(idleTimer)
    clearInterval(recheckTimer)
    await Promise.all(sessions.all().map((s) => s.transport.close().catch(() => {})))
  })
}

export default fp(mcpPlugin, { name: 'mcp', dependencies: ['auth', 'realtime'] })
