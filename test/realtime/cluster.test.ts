// Several instances as real server processes sharing PostgreSQL and Redis, Redis going away and
// coming back, and SIGTERM.
import t from 'tap'
import { needsRedis, needsRedisServer } from '../setup/services.ts'
import { build, testConfig } from '../helper.ts'
import { connect, freePort, serverEnv, startRedis, startServer, untilLogged, wsUrl } from './helpers.ts'
import { bearer, createChannelId, post, seedWorkspace } from '../support/index.ts'

t.test('two instances: fan-out both ways, replay across instances, SIGTERM closes with 1001 and exits 0', { skip: needsRedis() }, async (t) => {
  const config = await testConfig(t, { redis: true })
  // Seeds the shared database; no loops of its own.
  const { app: seeder, api } = await build(t, { databaseUrl: config.databaseUrl, redis: true, redisPrefix: config.redisPrefix, background: false })
  const ws = await seedWorkspace(seeder)
  const [a1, a2] = ws.agents
  const channel = await createChannelId(api, ws.primary.key, 'cluster', [a1!.id, a2!.id])

  const [p1, p2] = await Promise.all([freePort(), freePort()])
  const [one, two] = await Promise.all([startServer(t, serverEnv(config, p1)), startServer(t, serverEnv(config, p2))])
  const onOne = await connect(one.ws, a1!.key)
  const onTwo = await connect(two.ws, a2!.key)

  // REST on instance one → a socket on instance two (and one).
  const res = await fetch(`${one.http}/api/v1/channels/${channel}/messages`, {
    method: 'POST',
    headers: { ...bearer(ws.primary.key), 'content-type': 'application/json' },
    body: JSON.stringify({ text: 'from instance one' }),
  })
  t.equal(res.status, 201)
  const message = await res.json()
  t.same((await onTwo.client.type('new_message')).message, message)
  t.same((await onOne.client.type('new_message')).message, message)

  // send_message on instance two → a socket on instance one.
  onTwo.client.send({ type: 'send_message', id: 'x-1', channel_id: channel, text: 'from instance two' })
  const ack = await onTwo.client.type('ack')
  const relayed = await onOne.client.type('new_message', (f) => f.message.id === ack.message.id)
  t.same(relayed.message, ack.message)

  // Replay across instances: leave instance two, miss a message posted on one, come back on one.
  const lastSeen = (await onTwo.client.type('new_message', (f) => f.message.id === ack.message.id)).cursor
  await onTwo.client.close()
  const missed = await post(api, ws.primary.key, channel, 'missed while away')
  await untilLogged(api, a2!.key, lastSeen, missed.id)
  const back = await connect(one.ws, a2!.key, { since: lastSeen })
  t.equal(back.ready.replayed, 1)
  t.same(back.client.events()[0]!.message, missed)
  await back.client.close()

  // Graceful shutdown of instance two with a socket open.
  const last = await connect(two.ws, a2!.key)
  two.proc.kill('SIGTERM')
  t.equal((await last.client.closed).code, 1001)
  t.equal(await two.exited, 0, 'exit code 0')
  await onOne.client.close()
  one.proc.kill('SIGTERM')
  t.equal(await one.exited, 0)
})

t.test('Redis goes away: posting still works, health says so, events arrive once it is back', { skip: needsRedisServer() }, async (t) => {
  const port = await freePort()
  const redis = startRedis(t, port)
  const env = { REDIS_URL: `redis://127.0.0.1:${port}`, REDIS_PREFIX: 'ams:outage:', OUTBOX_RELAY_INTERVAL_MS: '100', OUTBOX_RELAY_DELAY_MS: '200' }
  const { app, api } = await build(t, { env })
  await waitFor(async () => (await api({ method: 'GET', url: '/health' })).json().redis === 'connected')
  const ws = await seedWorkspace(app)
  await app.listen({ host: '127.0.0.1', port: 0 })
  const [a1, a2] = ws.agents
  const channel = await createChannelId(api, ws.primary.key, 'outage', [a1!.id, a2!.id])
  const live = await connect(app, a1!.key)
  const away = await connect(app, a2!.key)
  const before = await post(api, ws.primary.key, channel, 'before the outage')
  const cursor = (await away.client.type('new_message', (f) => f.message.id === before.id)).cursor
  await away.client.close()
  await live.client.type('new_message', (f) => f.message.id === before.id)

  redis.proc.kill('SIGKILL')
  await redis.exited
  const during = await post(api, ws.primary.key, channel, 'during the outage')
  t.ok(during.id, 'the message is stored and answered 201')
  t.same((await api({ method: 'GET', url: '/health' })).json(), { status: 'degraded', database: 'connected', redis: 'disconnected' })

  startRedis(t, port) // stopped by its own teardown
  // The sweeper relays the event once Redis is back; the connected client gets it live.
  t.equal((await live.client.type('new_message', (f) => f.message.id === during.id)).message.text, 'during the outage')
  t.equal((await api({ method: 'GET', url: '/health' })).json().redis, 'connected')
  const back = await connect(app, a2!.key, { since: cursor })
  // The messages it missed. The restarted Redis began with an empty stream, and other events (with
  // no message) can land in it after the restart: one loaded full run failed reading the
  // `message.id` of such an event. Which one was not caught; three runs alone showed only the message.
  t.same(
    back.client
      .events()
      .filter((f) => f.type === 'new_message')
      .map((f) => f.message.id),
    [during.id],
    'the reconnecting client gets what it missed',
  )
  const after = await post(api, ws.primary.key, channel, 'after the outage')
  t.equal((await back.client.type('new_message', (f) => f.message.id === after.id)).message.text, 'after the outage')
  await back.client.close()
  await live.client.close()
  t.ok(wsUrl)
  // Stopped here, while its Redis runs: the teardown stops that Redis before the app (last
  // registered, first run), and one run in about ten hung in app.close() with Redis gone (cause
  // not found yet; a real stop is bounded by SHUTDOWN_TIMEOUT_MS in src/server.ts).
  await app.close()
})

async function waitFor(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error('condition not reached')
}
