// WebSocket gateway at GET /ws: authentication at the upgrade (401 before any socket exists),
// the start of each connection (catch-up with `since`, `ready`, then live delivery through the
// hub), the keep-alive and credential timers, and closing every socket with 1001 on shutdown.
// The rest lives in its own room: the socket and its bounds (connection.ts), the frames a client
// sends (inbound.ts), the periodic re-check of credentials (src/modules/identity/held.ts).
import type { ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { OnlyField, type Only } from '../events/filter.ts'
import { unauthorized } from '../lib/errors.ts'
import { Batched } from '../lib/batched.ts'
import { InOrder } from '../lib/in-order.ts'
import { withTimeout } from '../lib/timeout.ts'
import { bearer, heldCredential } from '../plugins/auth.ts'
import { recheckEvery, revokedHolders } from '../modules/identity/held.ts'
import type { MemberPrincipal } from '../modules/identity/principal.ts'
import type { Broker } from './broker.ts'
import { CLOSE_APPROVAL_PENDING, CLOSE_CREDENTIAL_INVALID, CLOSE_GOING_AWAY, CLOSE_TRY_AGAIN_LATER, Connection, type Credential } from './connection.ts'
import { compareCursors, SINCE_NOW, sinceCursor, type Cursor } from './cursor.ts'
import { SINCE_INTEGER_NOTE, SinceSchema, toEventFrame } from './frames.ts'
import type { Hub } from './hub.ts'
import { inboundFrames, sendJson } from './inbound.ts'
import type { Presence } from './presence.ts'
import { channelIdsOfMany, touchSeen } from './repo.ts'
import type { Signals } from './signals.ts'

const REPLAY_PAGE = 1_000
const SHUTDOWN_GRACE_MS = 1_000
/** After cutting the sockets that did not finish closing: how long their `close` events may take. */
const TERMINATE_GRACE_MS = 500
const READER_WAIT_MS = 3_000

// Other query parameters are ignored (proxies and client libraries add their own).
const WsQuery = Type.Object({
  token: Type.Optional(Type.String()),
  since: Type.Optional({ ...SinceSchema, description: `Resume after this cursor. ${SINCE_INTEGER_NOTE}` }),
  include_own_messages: Type.Optional(Type.Boolean({ description: "false: no new_message / message_updated frames for the caller's own messages (docs/loops.md)." })),
  only: Type.Optional(OnlyField),
})

const credentials = new WeakMap<FastifyRequest, Credential>()
/** Upgrades of accounts awaiting approval: accepted, then closed at once with 4403. */
const pendingApproval = new WeakSet<FastifyRequest>()

export interface GatewayOptions {
  broker: Broker
  hub: Hub
  signals: Signals
  presence: Presence
}

// Keep-alive: the sockets are pinged a share at a time, a share every tick, so that each is pinged
// once per WS_PING_INTERVAL_MS (see heartbeatTick).
const HEARTBEAT_TICKS_PER_INTERVAL = 600

export async function gateway(app: FastifyInstance, { broker, hub, signals, presence }: GatewayOptions): Promise<void> {
  const config = app.config
  const connections = new Set<Connection>()
  let stopping = false
  const limits = { maxBufferedBytes: config.wsMaxBufferedBytes, messagesPerSecond: config.wsMessagesPerSecond }
  const onFrame = inboundFrames(app)

  const authenticate = async (request: FastifyRequest<{ Querystring: { token?: unknown } }>): Promise<void> => {
    // Keys are base64: a `+` that was not URL-encoded arrives as a space.
    const query = typeof request.query.token === 'string' && request.query.token ? request.query.token.replaceAll(' ', '+') : undefined
    const token = query ?? bearer(request)
    const principal = await app.authenticate(token)
    // Integration keys are accepted only by the inbound endpoint.
    if (!principal || principal.kind === 'integration') throw unauthorized()
    if (principal.kind === 'human' && principal.awaitingApproval) {
      pendingApproval.add(request)
      return
    }
    credentials.set(request, heldCredential(app, principal, token))
  }

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
        if (conn.congested) await conn.drained()
        if (!conn.open) return { cursor, replayed }
        sendJson(conn, frame)
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

  // What every socket's start needs from PostgreSQL, asked together when many connect at once
  // (src/lib/batched.ts): the agent.connected events in one transaction, the last_seen_at writes
  // and the channels that presence tells in one statement each.
  const connectedEvents = new Batched<{ id: string; name: string; at: Date }, void>(async (agents) => {
    await app.events.transaction(async (_tx, emit) => {
      for (const a of agents) emit('agent.connected', null, { agent_id: a.id, agent_name: a.name, connected_at: a.at.toISOString() })
    })
    return agents.map(() => undefined)
  })
  const seenWrites = new Batched<{ id: string; agent: boolean; at: Date }, void>(async (seen) => {
    await touchSeen(app.db.pool, seen)
    return seen.map(() => undefined)
  })
  const memberChannels = new Batched<string, string[]>((ids) => channelIdsOfMany(app.db.pool, ids))

  async function agentConnected(principal: MemberPrincipal): Promise<void> {
    if (principal.kind !== 'agent') return
    await connectedEvents.call({ id: principal.id, name: principal.name, at: new Date() })
  }

  /**
   * Presence of agents and humans: their first socket anywhere makes them online, their last one
   * closing offline; last_seen_at records both moments, and the members of their channels are told.
   */
  async function memberPresence(principal: MemberPrincipal, online: boolean): Promise<void> {
    const changed = online ? await presence.connected(principal.id) : await presence.disconnected(principal.id)
    const at = new Date()
    await seenWrites.call({ id: principal.id, agent: principal.kind === 'agent', at })
    if (!changed) return
    const channelIds = await memberChannels.call(principal.id)
    const agent = principal.kind === 'agent'
    signals.publish({
      channelIds,
      except: principal.id,
      frame: { type: 'presence', member_id: principal.id, member_type: agent ? 'AGENT' : 'HUMAN', ...(agent ? { agent_id: principal.id } : {}), online, last_seen_at: at.toISOString() },
    })
  }
  const presenceFailed = (error: unknown): void => app.log.warn({ err: error }, 'could not record presence')
  // A member's socket changes are handled one at a time, in the order they happened: each awaits
  // Redis and PostgreSQL before it publishes, and a close overtaken by the next open would tell
  // everyone a connected person had gone offline (a reconnecting tab does exactly this).
  const presenceChanges = new InOrder()
  /** Sockets whose start (catch-up, presence, agent.connected) is still running. */
  const starting = new Set<Promise<unknown>>()
  const presenceChanged = (principal: MemberPrincipal, online: boolean): void => presenceChanges.run(principal.id, () => memberPresence(principal, online), presenceFailed)

  app.get<{ Querystring: { token?: string; since?: string; include_own_messages?: boolean; only?: Only } }>(
    '/ws',
    {
      websocket: true,
      schema: { hide: true, querystring: WsQuery },
      onRequest: async (request) => {
        await authenticate(request)
      },
    },
    (socket, request) => {
      if (pendingApproval.has(request)) {
        socket.close(CLOSE_APPROVAL_PENDING, "APPROVAL_PENDING: this account awaits the workspace owner's approval")
        return
      }
      const credential = credentials.get(request)!
      credentials.delete(request)
      // since=now: no catch-up, live from the newest event (the `ready` frame carries its cursor).
      const since = request.query.since === undefined || request.query.since === SINCE_NOW ? undefined : sinceCursor(request.query.since)
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
      const conn = new Connection(socket, tcp, credential, limits, (c) => app.log.warn({ memberId: c.memberId }, 'websocket client too slow; disconnected'))
      conn.skipsOwnMessages = request.query.include_own_messages === false
      conn.only = request.query.only ?? null
      connections.add(conn)
      socket.on('message', (data, isBinary) => onFrame(conn, data, isBinary))
      let counted = false
      socket.on('close', () => {
        connections.delete(conn)
        hub.remove(conn)
        if (counted) presenceChanged(conn.principal, false)
      })
      const started = start(conn, since).then(
        () => {
          if (conn.open) {
            counted = true
            presenceChanged(conn.principal, true)
          }
          return agentConnected(conn.principal).catch((error: unknown) => app.log.error({ err: error }, 'could not record agent.connected'))
        },
        (error: unknown) => {
          app.log.warn({ err: error }, 'websocket catch-up failed; closing')
          if (conn.open) socket.close(CLOSE_TRY_AGAIN_LATER, 'event log unavailable; reconnect later')
        },
      )
      starting.add(started)
      void started.finally(() => starting.delete(started))
    },
  )

  /**
   * Pings every socket once per interval, spread over it: each tick pings the next share of this
   * round's sockets, and a round's first tick refreshes presence. Pinging all 10,000 at once held
   * the event loop (p99 278 ms); in slices of 500 with a yield between, the 10,000 pongs still
   * came back together, and every 30 s the deliveries queued behind them waited up to 136 ms.
   */
  let round: Connection[] = []
  let next = 0
  let share = 0
  let ticks = 0
  function heartbeatTick(): void {
    // A round every HEARTBEAT_TICKS_PER_INTERVAL ticks, however few sockets it has.
    if (ticks++ % HEARTBEAT_TICKS_PER_INTERVAL === 0) {
      round = [...connections]
      next = 0
      share = Math.ceil(round.length / HEARTBEAT_TICKS_PER_INTERVAL)
      void presence.refresh().catch(presenceFailed)
    }
    const end = Math.min(round.length, next + share)
    for (; next < end; next++) {
      const conn = round[next]!
      if (connections.has(conn)) conn.heartbeat()
    }
    // Let go of the round's sockets once pinged (a closed one is not kept until the next round).
    if (next >= round.length) round = []
  }

  const timers: NodeJS.Timeout[] = []
  if (app.background) {
    timers.push(setInterval(heartbeatTick, Math.max(1, Math.floor(config.wsPingIntervalMs / HEARTBEAT_TICKS_PER_INTERVAL))))
    const recheck = async (): Promise<void> => {
      for (const conn of await revokedHolders(app.db.pool, [...connections])) conn.socket.close(CLOSE_CREDENTIAL_INVALID, 'credential revoked or expired')
    }
    timers.push(recheckEvery(config.wsAuthRecheckMs, recheck, (error) => app.log.warn({ err: error }, 'credential re-check failed')))
  }

  // Shutdown: no new sockets (Fastify answers 503 while closing), open ones get 1001; those that
  // do not finish the closing handshake in time are cut. Then what their closing set off (each
  // member going offline: last_seen_at, the presence signal) runs to its end before PostgreSQL
  // and Redis close (onClose): with 10,000 sockets it used to fail 10,000 times with a warning,
  // and last_seen_at kept the moment they connected.
  app.addHook('preClose', async () => {
    stopping = true
    for (const timer of timers) clearInterval(timer)
    await closeAll([...connections])
    // Bounded: with PostgreSQL or Redis unreachable these fail on their own timeouts, but the
    // rest of the stop (the deliveries' hand-back) needs the end of the time as well.
    const until = app.shutdown.reserveFrom()
    let timer: NodeJS.Timeout | undefined
    const cut = new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, until - Date.now()))))
    await Promise.race([Promise.allSettled([...starting]).then(() => presenceChanges.idle()), cut])
    clearTimeout(timer)
  })

  app.decorate('realtimeConnections', () => connections.size)
}

/** Closes the sockets with 1001; resolves when all have closed, or cuts them after a grace period. */
async function closeAll(open: Connection[]): Promise<void> {
  if (!open.length) return
  await new Promise<void>((resolve) => {
    let left = open.length
    // Cut: each terminated socket still emits `close` (and so goes offline) in a moment.
    const timer = setTimeout(() => {
      for (const conn of open) conn.socket.terminate()
      setTimeout(resolve, TERMINATE_GRACE_MS).unref()
    }, SHUTDOWN_GRACE_MS)
    timer.unref()
    const done = (): void => {
      left -= 1
      if (left > 0) return
      clearTimeout(timer)
      resolve()
    }
    for (const conn of open) {
      if (conn.socket.readyState === conn.socket.CLOSED) done()
      else {
        conn.socket.once('close', done)
        conn.socket.close(CLOSE_GOING_AWAY, 'server shutting down')
      }
    }
  })
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Number of open WebSocket connections on this instance. */
    realtimeConnections: () => number
  }
}
