// Graceful stop of the HTTP side: every kept-alive connection gets an answer or a clean close,
// never a reset. While the server closes:
// - requests in flight finish normally; every request that arrives from then on, on a kept-alive
//   connection or a new one, gets 503 with `Connection: close` (src/plugins/errors.ts), after
//   which the server closes that connection: a clean close the client expects;
// - connections stay open for a short drain (at most DRAIN_MS) so that a client that is about
//   to send its next request on a kept-alive connection gets 503 `Connection: close`
//   (src/plugins/errors.ts) instead of finding the socket destroyed under its request (the
//   reset a client cannot tell from a crash); the drain ends as soon as no plain HTTP
//   connection is left, and only connections still silent after it are closed as idle.
// WebSocket connections are closed by the gateway with 1001 (src/realtime/gateway.ts).
import type { Socket } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

const DRAIN_MS = 1_000
const POLL_MS = 25

async function shutdownPlugin(app: FastifyInstance): Promise<void> {
  const open = new Set<Socket>()
  app.server.on('connection', (socket: Socket) => {
    open.add(socket)
    socket.once('close', () => open.delete(socket))
  })
  // An upgraded socket is the gateway's business from then on.
  app.server.on('upgrade', (_request, socket: Socket) => open.delete(socket))

  app.addHook('preClose', async () => {
    if (!app.server.listening) return
    const deadline = Date.now() + Math.min(DRAIN_MS, app.config.shutdownTimeoutMs / 4)
    while (open.size && Date.now() < deadline) await sleep(POLL_MS)
  })
}

export default fp(shutdownPlugin, { name: 'shutdown' })
