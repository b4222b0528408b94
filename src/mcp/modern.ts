// The 2026-07-28 protocol revision on /mcp: no sessions, every request carries its version and
// capabilities in `_meta`, and the SDK's `createMcpHandler` serves it from a fresh server per
// request (`server/discover`, `resultType`, cache fields, the new error codes and the
// standard-header checks are all the SDK's). Change notifications are a `subscriptions/listen`
// stream: the SDK owns the stream (acknowledgement first, subscription ids, keep-alives), and the
// bus it listens on is ours, so that each stream is a channel watcher (src/mcp/watchers.ts) with
// the listener's own access rules: a stream only ever hears about channels its caller may read.
import { AsyncLocalStorage } from 'node:async_hooks'
import { createMcpHandler, type McpHttpHandler, type ServerEvent, type ServerEventBus } from '@modelcontextprotocol/server'
import type { FastifyInstance } from 'fastify'
import { AppError } from '../lib/errors.ts'
import * as channels from '../modules/channels/service.ts'
import type { LiveCallers, McpCaller } from './caller.ts'
import { jsonRpcError, requestIdOf } from './http.ts'
import type { Inbox } from './inbox.ts'
import { CHANNEL_URI_PREFIX, createMcpServer } from './server.ts'
import type { ChannelWatchers } from './watchers.ts'

const SERVER_ERROR = -32_000

export interface ModernDeps {
  app: FastifyInstance
  inbox: Inbox
  watchers: ChannelWatchers
  live: LiveCallers
}

export interface ModernMcp {
  /**
   * Serves one 2026-era request. `transport` aborts the HTTP exchange (the client left, or a
   * revoked credential ends a `subscriptions/listen` stream).
   */
  handle: (web: Request, body: unknown, caller: McpCaller, transport: AbortController) => Promise<Response>
  /** Open `subscriptions/listen` streams. */
  readonly listening: number
  close: () => Promise<void>
}

/** Who opens a `subscriptions/listen` stream, and the channels it may hear about. */
interface ListenContext {
  caller: McpCaller
  channels: string[]
}

interface ListenBody {
  method: 'subscriptions/listen'
  params: { notifications: { resourceSubscriptions?: unknown } }
}

function isListen(body: unknown): body is ListenBody {
  if (typeof body !== 'object' || body === null || (body as { method?: unknown }).method !== 'subscriptions/listen') return false
  const notifications = (body as { params?: { notifications?: unknown } }).params?.notifications
  return typeof notifications === 'object' && notifications !== null
}

/**
 * The bus the SDK's `subscriptions/listen` streams subscribe to. A stream subscribes while its
 * request is being served, inside `listening.run(…)`, so the subscription knows its caller and
 * becomes a channel watcher; resource updates reach it only through that watcher's checks.
 * Nothing here publishes list changes: the tool, prompt and resource lists do not change while
 * the server runs (no `listChanged` capability is advertised).
 */
class ListenBus implements ServerEventBus {
  readonly listening = new AsyncLocalStorage<ListenContext>()

  constructor(private readonly watchers: ChannelWatchers) {}

  publish(_event: ServerEvent): void {}

  subscribe(listener: (event: ServerEvent) => void): () => void {
    const context = this.listening.getStore()
    if (!context) return () => {}
    return this.watchers.add({ caller: context.caller, channels: new Set(context.channels), notify: (uri) => listener({ kind: 'resource_updated', uri }) })
  }
}

export function modernMcp({ app, inbox, watchers, live }: ModernDeps): ModernMcp {
  const { config } = app
  const bus = new ListenBus(watchers)
  const handler: McpHttpHandler = createMcpHandler(({ authInfo }) => createMcpServer({ app, inbox, caller: (authInfo?.extra as { caller: McpCaller }).caller }), {
    // 2025-era traffic never reaches this handler: src/mcp/legacy.ts serves it, with sessions.
    legacy: 'reject',
    bus,
    maxSubscriptions: config.mcpMaxSessions,
    keepAliveMs: config.sseKeepaliveMs,
    maxRequestBodySize: config.bodyLimitBytes,
    onerror: (error) => app.log.debug({ err: error }, 'MCP request refused'),
  })
  /** Open listen streams per caller id. */
  const streams = new Map<string, number>()
  let listening = 0

  /** The listen request with only the resources its caller may read left in it (one query). */
  async function readableSubscriptions(body: ListenBody, caller: McpCaller): Promise<{ body: ListenBody; channels: string[] }> {
    const requested = body.params.notifications.resourceSubscriptions
    if (!Array.isArray(requested) || !requested.length) return { body, channels: [] }
    const readable = new Set((await channels.listChannels(app.ctx, caller.principal)).map((c) => `${CHANNEL_URI_PREFIX}${c.id}`))
    const allowed = requested.filter((uri): uri is string => typeof uri === 'string' && readable.has(uri))
    const channelIds = allowed.map((uri) => uri.slice(CHANNEL_URI_PREFIX.length))
    return { body: { ...body, params: { ...body.params, notifications: { ...body.params.notifications, resourceSubscriptions: allowed } } }, channels: channelIds }
  }

  async function listen(web: Request, body: ListenBody, caller: McpCaller, transport: AbortController): Promise<Response> {
    const id = caller.principal.id
    const open = streams.get(id) ?? 0
    if (open >= config.mcpMaxSessionsPerCaller) {
      const error = new AppError('RATE_LIMITED', `at most ${config.mcpMaxSessionsPerCaller} subscriptions/listen streams per caller are open; close one or retry later`, {
        headers: { 'retry-after': '30' },
      })
      return jsonRpcError(error, SERVER_ERROR, requestIdOf(body))
    }
    const restricted = await readableSubscriptions(body, caller)
    streams.set(id, open + 1)
    listening += 1
    const unlive = live.add({ caller, revoked: () => transport.abort() })
    transport.signal.addEventListener(
      'abort',
      () => {
        unlive()
        listening -= 1
        const left = (streams.get(id) ?? 1) - 1
        if (left > 0) streams.set(id, left)
        else streams.delete(id)
      },
      { once: true },
    )
    return bus.listening.run({ caller, channels: restricted.channels }, () => handler.fetch(web, { authInfo: authInfoOf(caller), parsedBody: restricted.body }))
  }

  async function handle(web: Request, body: unknown, caller: McpCaller, transport: AbortController): Promise<Response> {
    transport.signal.addEventListener('abort', () => caller.closed.abort(), { once: true })
    if (isListen(body)) return listen(web, body, caller, transport)
    // Until the response ends: a wait in progress answers UNAUTHORIZED when the credential is revoked.
    const unlive = live.add({ caller, revoked: () => caller.closed.abort() })
    transport.signal.addEventListener('abort', unlive, { once: true })
    return handler.fetch(web, { authInfo: authInfoOf(caller), parsedBody: body })
  }

  return {
    handle,
    get listening() {
      return listening
    },
    close: () => handler.close(),
  }
}

/** The SDK passes this to the server factory: the caller travels with it. */
function authInfoOf(caller: McpCaller) {
  return { token: caller.credential, clientId: caller.principal.id, scopes: [], extra: { caller } }
}
