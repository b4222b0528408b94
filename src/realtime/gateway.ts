// WebSocket gateway at GET /ws: authentication at the upgrade (401 before any socket exists),
// catch-up with `since` then live delivery (through the hub), client frames (send_message goes
// through the same service as REST), keep-alive, send-queue bound, per-connection rate limit,
// periodic re-check of credentials, and closing every socket with 1001 on shutdown.
import type { ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { Compile } from 'typebox/compile'
import type { RawData, WebSocket } from 'ws'
import { AppError, unauthorized } from '../lib/errors.ts'
import { outageError } from '../lib/outage.ts'
import { inputProblem } from '../lib/input-guard.ts'
import { withTimeout } from '../lib/timeout.ts'
import { createMessage } from '../modules/messages/service.ts'
import { approvalPending, bearer, type MemberPrincipal } from '../plugins/auth.ts'
import type { Broker } from './broker.ts'
import { compareCursors, sinceCursor, type Cursor } from './cursor.ts'
import { PingFrame, SendMessageFrame, SINCE_INTEGER_NOTE, SinceSchema, toEventFrame, type SendMessage } from './frames.ts'
import { encodeFrame, Hub, type Client } from './hub.ts'
import { activeUserIds, liveApiKeyIds } from './repo.ts'
import type { LogEntry } from './broker.ts'

/** Close codes besides the standard ones (docs/realtime.md). */
export const CLOSE_GOING_AWAY = 1001
export const CLOSE_TRY_AGAIN_LATER = 1013
export const CLOSE_CREDENTIAL_INVALID = 4401

const REPLAY_PAGE = 1_000
const SHUTDOWN_GRACE_MS = 1_000
const MAX_CLIENT_ID = 128
const READER_WAIT_MS = 3_000

const checkSendMessage = Compile(SendMessageFrame)
const checkPing = Compile(PingFrame)

// Other query parameters are ignored (proxies and client libraries add their own).
const WsQuery = Type.Object({
  token: Type.Optional(Type.String()),
  since: Type.Optional({ ...SinceSchema, description: `Resume after this cursor. ${SINCE_INTEGER_NOTE}` }),
  include_own_messages: Type.Optional(Type.Boolean({ description: "false: no new_message / message_updated frames for the caller's own messages (docs/loops.md)." })),
})

/** How a client frame is named in the answers to it: `id`, and `client_id` when the client used that. */
interface Echo {
  id: string | null
  client_id?: string
}

const readableId = (value: unknown): string | undefined =>
  typeof value === 'string' && value.length >= 1 && value.length <= MAX_CLIENT_ID ? value : undefined

/** Read from any parsed frame, valid or not, so that even a refusal names the frame it answers. */
function echoOf(body: unknown): Echo {
  if (typeof body !== 'object' || body === null) return { id: null }
  const { id, client_id: clientId } = body as { id?: unknown; client_id?: unknown }
  const echoed = readableId(clientId)
  return echoed === undefined ? { id: readableId(id) ?? null } : { id: readableId(id) ?? echoed, client_id: echoed }
}

interface Credential {
  principal: MemberPrincipal
  /** Expiry of a JWT, in epoch milliseconds. */
  expiresAt: number | null
}

const credentials = new WeakMap<FastifyRequest, Credential>()

class Connection implements Client {
  readonly memberId: string
  pending: LogEntry[] | null = null
  floor: Cursor | null = null
  alive = true
  skipsOwnMessages = false
  private windowStart = 0
  private windowCount = 0
  /** Client frames are handled one after the other, so messages keep the client's order. */
  queue: Promise<void> = Promise.resolve()

  constructor(
    readonly socket: WebSocket,
    readonly credential: Credential,
    private readonly limits: { maxBufferedBytes: number; messagesPerSecond: number },
    private readonly onOverflow: (conn: Connection) => void,
  ) {
    this.memberId = credential.principal.id
  }

  get principal(): MemberPrincipal {
    return this.credential.principal
  }

  get open(): boolean {
    return this.socket.readyState === this.socket.OPEN
  }

  send(frame: Buffer): void {
    if (!this.open) return
    // A client that stops reading lets the queue grow: cut it off instead of buffering forever.
    if (this.socket.bufferedAmount + frame.length > this.limits.maxBufferedBytes) {
      this.onOverflow(this)
      this.socket.terminate()
      return
    }
    this.socket.send(frame, { binary: false })
  }

  /** Waits until the send queue is at most half full (replay of a long backlog). */
  async drained(): Promise<void> {
    const limit = this.limits.maxBufferedBytes / 2
    while (this.open && this.socket.bufferedAmount > limit) await new Promise((resolve) => setTimeout(resolve, 5))
  }

  /** Fixed one-second window. */
  allowFrame(now: number): boolean {
    if (now - this.windowStart >= 1_000) {
      this.windowStart = now
      this.windowCount = 0
    }
    this.windowCount += 1
    return this.windowCount <= this.limits.messagesPerSecond
  }
}

export interface GatewayOptions {
  broker: Broker
  hub: Hub
}

export async function gateway(app: FastifyInstance, { broker, hub }: GatewayOptions): Promise<void> {
  const config = app.config
  const connections = new Set<Connection>()
  let stopping = false
  const limits = { maxBufferedBytes: config.wsMaxBufferedBytes, messagesPerSecond: config.wsMessagesPerSecond }

  const authenticate = async (request: FastifyRequest<{ Querystring: { token?: unknown } }>): Promise<void> => {
    // Keys are base64: a `+` that was not URL-encoded arrives as a space.
    const query = typeof request.query.token === 'string' && request.query.token ? request.query.token.replaceAll(' ', '+') : undefined
    const token = query ?? bearer(request)
    const principal = await app.authenticate(token)
    // Integration keys are accepted only by the inbound endpoint.
    if (!principal || principal.kind === 'integration') throw unauthorized()
    if (principal.kind === 'human' && principal.awaitingApproval) throw approvalPending()
    let expiresAt: number | null = null
    if (principal.kind === 'human') {
      const claims = app.jwt.decode<{ exp?: number }>(token!)
      expiresAt = typeof claims?.exp === 'number' ? claims.exp * 1000 : null
    }
    credentials.set(request, { principal, expiresAt })
  }

  const sendJson = (conn: Connection, frame: unknown): void => conn.send(encodeFrame(frame))
  const sendError = (conn: Connection, echo: Echo, code: string, error: string, retryAfter?: string): void =>
    sendJson(conn, { type: 'error', ...echo, code, error, ...(retryAfter ? { retry_after: Number(retryAfter) } : {}) })

  /** Sends the missed events after `since` that the member may see; returns the new position. */
  async function replay(conn: Connection, since: Cursor): Promise<{ cursor: Cursor; replayed: number }> {
    let cursor = since
    let replayed = 0
    for (;;) {
      const page = await broker.range(cursor, REPLAY_PAGE)
      for (const entry of page) {
        cursor = entry.cursor
        if (!hub.wants(conn, entry.event)) continue
        const frame = toEventFrame(entry)
        if (!frame) continue
        if (conn.socket.bufferedAmount > limits.maxBufferedBytes / 2) await conn.drained()
        if (!conn.open) return { cursor, replayed }
        conn.send(encodeFrame(frame))
        replayed += 1
      }
      if (page.length < REPLAY_PAGE) return { cursor, replayed }
    }
  }

  async function start(conn: Connection, since: Cursor | undefined): Promise<void> {
    await hub.add(conn)
    await withTimeout(broker.reading(), READER_WAIT_MS, 'the event log reader is not running')
    const info = await broker.info()
    let cursor = info.newest
    let replayed = 0
    if (since !== undefined) {
      if (compareCursors(since, info.floor) < 0 || compareCursors(since, info.newest) > 0) {
        sendJson(conn, { type: 'resync_required', cursor, error: 'the cursor is older than the retained event history; reload state over REST and continue from this cursor' })
      } else {
        ;({ cursor, replayed } = await replay(conn, since))
      }
    }
    if (!conn.open) return
    const p = conn.principal
    sendJson(conn, { type: 'ready', cursor, replayed, principal: { id: p.id, type: p.kind === 'agent' ? 'AGENT' : 'HUMAN', name: p.kind === 'agent' ? p.name : p.displayName } })
    hub.goLive(conn, cursor)
  }

  async function agentConnected(principal: MemberPrincipal): Promise<void> {
    if (principal.kind !== 'agent') return
    await app.events.transaction(async (_tx, emit) => {
      emit('agent.connected', null, { agent_id: principal.id, agent_name: principal.name, connected_at: new Date().toISOString() })
    })
  }

  async function sendMessage(conn: Connection, frame: SendMessage, echo: Echo): Promise<void> {
    try {
      // The frame's id is its idempotency key (24 h, per sender): a client that resends a frame
      // after a reconnect gets the original message back instead of a second one.
      const idempotencyKey = echo.id === null ? undefined : `ws:${echo.id}`
      const result = await createMessage(app, conn.principal, frame.channel_id, { text: frame.text, idempotencyKey, inReplyToEvent: frame.in_reply_to_event })
      sendJson(conn, { type: 'ack', ...echo, message: result.body })
    } catch (error) {
      if (error instanceof AppError) return sendError(conn, echo, error.code, error.message, error.headers?.['retry-after'])
      const outage = outageError(error)
      if (outage) return sendError(conn, echo, outage.code, outage.message)
      app.log.error({ err: error }, 'send_message failed')
      sendError(conn, echo, 'INTERNAL_ERROR', 'internal server error')
    }
  }

  function onFrame(conn: Connection, data: RawData, isBinary: boolean): void {
    const raw = isBinary ? null : data.toString()
    let body: unknown
    try {
      body = raw === null ? undefined : JSON.parse(raw)
    } catch {
      body = undefined
    }
    const echo = echoOf(body)
    if (!conn.allowFrame(Date.now())) {
      return sendError(conn, echo, 'RATE_LIMITED', `at most ${limits.messagesPerSecond} messages per second per connection`)
    }
    if (raw === null) return sendError(conn, { id: null }, 'VALIDATION_ERROR', 'frames are JSON text, not binary')
    if (body === undefined) return sendError(conn, { id: null }, 'INVALID_JSON', 'the frame is not valid JSON')
    const type = (body as { type?: unknown } | null)?.type
    if (type === 'send_message') {
      if (!checkSendMessage.Check(body)) {
        const first = checkSendMessage.Errors(body)[0]
        const where = first?.instancePath ? `${first.instancePath.slice(1)}: ` : ''
        return sendError(conn, echo, 'VALIDATION_ERROR', `invalid send_message: ${where}${first?.message ?? 'invalid frame'}`)
      }
      const problem = inputProblem(body)
      if (problem) return sendError(conn, echo, 'VALIDATION_ERROR', `invalid send_message: ${problem}`)
      conn.queue = conn.queue.then(() => sendMessage(conn, body as SendMessage, echo))
      return
    }
    if (type === 'ping') {
      if (!checkPing.Check(body)) return sendError(conn, echo, 'VALIDATION_ERROR', 'invalid ping frame')
      return sendJson(conn, { type: 'pong', ...echo })
    }
    sendError(conn, echo, 'VALIDATION_ERROR', 'unknown frame type; expected send_message or ping')
  }

  app.get<{ Querystring: { token?: string; since?: string; include_own_messages?: boolean } }>(
    '/ws',
    {
      websocket: true,
      schema: { hide: true, querystring: WsQuery },
      onRequest: async (request) => {
        await authenticate(request)
      },
    },
    (socket, request) => {
      const credential = credentials.get(request)!
      credentials.delete(request)
      const since = request.query.since === undefined ? undefined : sinceCursor(request.query.since)
      // @fastify/websocket's error listener keeps the request and reply alive for the socket's
      // whole life (a few KB per idle connection); ours keeps nothing.
      socket.removeAllListeners('error')
      socket.on('error', () => socket.terminate())
      // The HTTP response object of the upgrade stays attached to the TCP socket (and keeps the
      // request with it) although it is done; detach it.
      const tcp = request.raw.socket as Socket & { _httpMessage?: ServerResponse | null }
      tcp._httpMessage?.detachSocket(tcp)
      if (stopping) {
        socket.close(CLOSE_GOING_AWAY, 'server shutting down')
        return
      }
      const conn = new Connection(socket, credential, limits, (c) => app.log.warn({ memberId: c.memberId }, 'websocket client too slow; disconnected'))
      conn.skipsOwnMessages = request.query.include_own_messages === false
      connections.add(conn)
      socket.on('pong', () => {
        conn.alive = true
      })
      socket.on('message', (data, isBinary) => onFrame(conn, data, isBinary))
      socket.on('close', () => {
        connections.delete(conn)
        hub.remove(conn)
      })
      start(conn, since).then(
        () => agentConnected(conn.principal).catch((error: unknown) => app.log.error({ err: error }, 'could not record agent.connected')),
        (error: unknown) => {
          app.log.warn({ err: error }, 'websocket catch-up failed; closing')
          if (conn.open) socket.close(CLOSE_TRY_AGAIN_LATER, 'event log unavailable; reconnect later')
        },
      )
    },
  )

  // Keep-alive: a socket that has not answered the previous ping is dropped.
  function heartbeat(): void {
    for (const conn of connections) {
      if (!conn.alive) {
        conn.socket.terminate()
        continue
      }
      conn.alive = false
      conn.socket.ping()
    }
  }

  // A revoked key, a deleted agent or user, or an expired JWT closes its sockets.
  async function recheckCredentials(): Promise<void> {
    // Judge only the sockets open when the query was made: one that connects while it runs was
    // authenticated just now, and its key is not in the answer.
    const checked = [...connections]
    const keyIds = new Set<string>()
    const userIds = new Set<string>()
    for (const { principal } of checked) {
      if (principal.kind === 'agent') keyIds.add(principal.keyId)
      else userIds.add(principal.id)
    }
    if (!keyIds.size && !userIds.size) return
    const [liveKeys, activeUsers] = await Promise.all([liveApiKeyIds(app.db.pool, [...keyIds]), activeUserIds(app.db.pool, [...userIds])])
    const now = Date.now()
    for (const conn of checked) {
      const { principal, expiresAt } = conn.credential
      const valid =
        principal.kind === 'agent' ? liveKeys.has(principal.keyId) : activeUsers.has(principal.id) && (expiresAt === null || expiresAt > now)
      if (!valid) conn.socket.close(CLOSE_CREDENTIAL_INVALID, 'credential revoked or expired')
    }
  }

  const timers: NodeJS.Timeout[] = []
  if (app.background) {
    timers.push(setInterval(heartbeat, config.wsPingIntervalMs))
    let checking = false
    timers.push(
      setInterval(() => {
        if (checking) return
        checking = true
        recheckCredentials()
          .catch((error: unknown) => app.log.warn({ err: error }, 'credential re-check failed'))
          .finally(() => {
            checking = false
          })
      }, config.wsAuthRecheckMs),
    )
  }

  // Shutdown: no new sockets (Fastify answers 503 while closing), open ones get 1001; those that
  // do not finish the closing handshake in time are cut.
  app.addHook('preClose', async () => {
    stopping = true
    for (const timer of timers) clearInterval(timer)
    const open = [...connections]
    if (!open.length) return
    await new Promise<void>((resolveAll) => {
      let resolve = resolveAll
      let left = open.length
      const done = (): void => {
        left -= 1
        if (left <= 0) resolve()
      }
      const timer = setTimeout(() => {
        for (const conn of open) conn.socket.terminate()
        resolve()
      }, SHUTDOWN_GRACE_MS)
      timer.unref()
      const resolveEarly = resolve
      resolve = () => {
        clearTimeout(timer)
        resolveEarly()
      }
      for (const conn of open) {
        if (conn.socket.readyState === conn.socket.CLOSED) done()
        else {
          conn.socket.once('close', done)
          conn.socket.close(CLOSE_GOING_AWAY, 'server shutting down')
        }
      }
    })
  })

  app.decorate('realtimeConnections', () => connections.size)
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Number of open WebSocket connections on this instance. */
    realtimeConnections: () => number
  }
}
