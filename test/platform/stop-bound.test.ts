// The graceful stop is bounded by SHUTDOWN_TIMEOUT_MS: a delivery attempt still running near the
// end is cut short and handed back (not left under its lease), and whatever else holds the
// process (here a request whose body never arrives) does not keep it past the bound.
import net from 'node:net'
import t from 'tap'
import { build, testConfig } from '../helper.ts'
import { freePort, serverEnv, startServer } from '../processes.ts'
import { createWebhook, eventually, heldReceiver } from '../webhooks/helpers.ts'
import { createChannelId, post, seedWorkspace } from '../support/index.ts'

t.test('an attempt still running near the end of the stop is cut short and handed back', async (t) => {
  const env = { WEBHOOK_ALLOW_PRIVATE: 'true' }
  const config = await testConfig(t, { env })
  const { app, api } = await build(t, { databaseUrl: config.databaseUrl, background: false, env })
  const ws = await seedWorkspace(app)
  const agent = ws.agents[0]!
  const { rx, release } = await heldReceiver(t)
  await createWebhook(api, agent.key, agent.id, rx.url())
  const channel = await createChannelId(api, ws.primary.key, 'held', [agent.id])
  await post(api, ws.primary.key, channel, 'held by the receiver')

  // The attempt would wait 60 s for the receiver; the stop gives it until shortly before 8 s.
  const serverConfig = { ...env, SHUTDOWN_TIMEOUT_MS: '8000', WEBHOOK_TIMEOUT_MS: '60000', WEBHOOK_CLAIM_TIMEOUT_MS: '90000' }
  const first = await startServer(t, serverEnv(config, await freePort(), serverConfig))
  await eventually(async () => rx.requests.length > 0, 'the attempt to reach the receiver')
  first.proc.kill('SIGTERM')
  t.equal(await first.exited, 0, 'the stop ended within its bound')
  const [row] = (await app.db.pool.query<{ status: string; attempts: number; due: boolean }>('SELECT status, attempts, next_attempt_at <= now() AS due FROM deliveries')).rows
  t.same(row, { status: 'pending', attempts: 0, due: true }, 'handed back: due now, the interrupted attempt not counted')

  release()
  await startServer(t, serverEnv(config, await freePort(), serverConfig))
  await eventually(async () => (await app.db.pool.query("SELECT 1 FROM deliveries WHERE status = 'succeeded'")).rowCount, 'the delivery to succeed after the restart')
  const ids = new Set(rx.requests.map((r) => r.headers['x-webhook-delivery-id']))
  t.equal(ids.size, 1, 'sent again under the same delivery id (at least once)')
})

t.test('the stop has a bound: a request that never ends does not keep the process', async (t) => {
  const config = await testConfig(t)
  // MIGRATE_ON_START as in production: the test bundle (dist/test-server/, test/processes.ts) must
  // find prisma/migrations from where it lies, or the server would not start. The template has
  // them all, so none is applied.
  const server = await startServer(t, serverEnv(config, await freePort(), { SHUTDOWN_TIMEOUT_MS: '3000', MIGRATE_ON_START: 'true' }))
  t.notMatch(server.output(), /applied migrations/, 'the migrations were found, all already applied')
  const socket = net.connect(server.port, '127.0.0.1')
  await new Promise<void>((resolve) => socket.once('connect', resolve))
  socket.on('error', () => {})
  // The headers and half the body: the request stays in flight until the client sends the rest.
  socket.write('POST /api/v1/auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"email":')
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()))
  server.proc.kill('SIGTERM')
  t.equal(await server.exited, 1, 'the process exited at SHUTDOWN_TIMEOUT_MS (code 1), the request still unfinished')
  await closed
  t.match(server.output(), /killed by timeout \(3000ms\)/)
})
