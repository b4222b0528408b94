// Graceful stop (SIGTERM → app.close(), src/server.ts), within SHUTDOWN_TIMEOUT_MS. Clients see
// answers, clean closes and refused connections, never a reset of a connection that sent a
// request or may be sending one:
// 1. Stop accepting: the listening socket closes first. A new connection is refused by the
//    kernel (a client retries that elsewhere, and knows nothing was sent), instead of being
//    accepted and then destroyed by the close of idle connections, which is what reset clients
//    before: they had been told to reconnect (503 `Connection: close`) while the listener was
//    still open, reconnected, and their fresh connection was closed as "idle" under the request
//    they were writing.
// 2. Every answer given from then on carries `Connection: close` (Fastify adds it to requests that
//    arrive while closing, the hook below to those already running), so each kept-alive
//    connection closes cleanly right after its last answer. A request that arrives on a
//    kept-alive connection is served as usual: the process still runs everything until the
//    connections are gone.
// 3. The drain (registered last, so that event streams, long polls, WebSockets and MCP sessions
//    have been ended by their own hooks) waits for those connections to close, at most a quarter
//    of SHUTDOWN_TIMEOUT_MS. The connections still silent then are closed, and the close waits
//    for requests in flight; the process exits at SHUTDOWN_TIMEOUT_MS anyway. Silent includes a
//    connection that never sent a request (a client's pool opened it and had nothing to send):
//    Node counts that one as busy until its headers timeout, so Fastify's own close of idle
//    connections left it, and a close waited 70 s for it.
// Deliveries stop beside this, from the first moment (src/workers/plugin.ts), using the deadline
// decorated here.
import type { IncomingMessage, ServerResponse } from 'node:http'
import net, { type Socket } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

const POLL_MS = 25
/** The end of a stop kept for the steps that need the database last (see reserveFrom). */
const STOP_RESERVE_MS = 2_000

export interface ShutdownClock {
  /** When the stop began (epoch ms), or null while the server runs. */
  readonly startedAt: number | null
  /** When the stop must be over (epoch ms): its start plus SHUTDOWN_TIMEOUT_MS. */
  deadline(): number
  /**
   * When the work of the stop's first steps must be over (epoch ms): the deadline less a reserve
   * (2 s, at most a fifth of SHUTDOWN_TIMEOUT_MS) for the steps that need the database after them
   * (the deliveries' hand-back, closing the pools).
   */
  reserveFrom(): number
}

declare module 'fastify' {
  interface FastifyInstance {
    shutdown: ShutdownClock
  }
}

interface Connections {
  /** Plain HTTP connections (not upgraded to WebSockets). */
  open: Set<Socket>
  /** Those with a request being answered. */
  answering: Set<Socket>
}

/** Kept by the plugin below for the drain. */
const connectionsOf = new WeakMap<FastifyInstance['server'], Connections>()

async function shutdownPlugin(app: FastifyInstance): Promise<void> {
  const open = new Set<Socket>()
  const answering = new Set<Socket>()
  connectionsOf.set(app.server, { open, answering })
  app.server.on('connection', (socket: Socket) => {
    open.add(socket)
    socket.once('close', () => {
      open.delete(socket)
      answering.delete(socket)
    })
  })
  // Until both the answer is out and the request has been read to its end: a request can be
  // answered (a 401 before its body) while its body is still arriving.
  app.server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const socket = request.socket
    answering.add(socket)
    let pending = 2
    const done = (): void => {
      if (--pending === 0) answering.delete(socket)
    }
    response.once('close', done)
    request.once('close', done)
  })
  // An upgraded socket is the gateway's business from then on.
  app.server.on('upgrade', (_request, socket: Socket) => {
    open.delete(socket)
    answering.delete(socket)
  })

  let startedAt: number | null = null
  const timeoutMs = app.config.shutdownTimeoutMs
  app.decorate('shutdown', {
    get startedAt() {
      return startedAt
    },
    deadline: () => (startedAt ?? Date.now()) + timeoutMs,
    reserveFrom: () => (startedAt ?? Date.now()) + timeoutMs - Math.min(STOP_RESERVE_MS, timeoutMs / 5),
  })

  app.addHook('onSend', (_request, reply, payload, done) => {
    if (startedAt !== null) reply.header('connection', 'close')
    done(null, payload)
  })

  app.addHook('preClose', async () => {
    startedAt = Date.now()
    // net.Server's close, not http.Server's: that one also closes idle connections at once.
    if (app.server.listening) net.Server.prototype.close.call(app.server)
  })
}

/** The drain of step 3: registered after every other plugin (src/app.ts). */
async function connectionDrain(app: FastifyInstance): Promise<void> {
  app.addHook('preClose', async () => {
    const connections = connectionsOf.get(app.server)
    if (!connections) return
    const { open, answering } = connections
    const until = (app.shutdown.startedAt ?? Date.now()) + app.config.shutdownTimeoutMs / 4
    while (open.size && Date.now() < until) await sleep(POLL_MS)
    for (const socket of open) if (!answering.has(socket)) socket.destroy()
  })
}

export default fp(shutdownPlugin, { name: 'shutdown' })
export const drain = fp(connectionDrain, { name: 'connection-drain', dependencies: ['shutdown'] })
