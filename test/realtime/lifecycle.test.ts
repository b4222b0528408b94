// Connection life cycle: credentials re-checked while connected, keep-alive, slow readers, the
// outbox sweeper, and shutdown.
import pg from 'pg'
import t from 'tap'
import { build } from '../helper.ts'
import { needsRedis } from '../setup/services.ts'
import { connect, listen, openWs, refusedUpgrade, wsUrl } from './helpers.ts'
import { newEvent, outboxRow } from '../../src/events/bus.ts'
import { uuidv7 } from '../../src/lib/ids.ts'
import { createChannelId, disableLoopGuard, post, seedWorkspace } from '../support/index.ts'

// Short intervals so the tests wait little. The ping interval is short only in the keep-alive
// test: clients and server share this process, and a busy event loop delays the pong.
const recheckFast = { WS_AUTH_RECHECK_MS: '100' }
const pingFast = { WS_PING_INTERVAL_MS: '500' }

t.test('a revoked key, a deleted agent and an expired JWT close their sockets (4401)', async (t) => {
  const { app } = await build(t, { env: recheckFast })
  const ws = await seedWorkspace(app, 3)
  await listen(app)
  const [a1, a2, a3] = ws.agents
  // The short-lived JWT connects first and with a margin: JWT expiry has whole-second precision,
  // and a loaded machine must not let it expire before the socket is ready.
  const shortJwt = app.jwt.sign({ sub: ws.member.id, typ: 'human' }, { expiresIn: '5s' })
  const expiring = await connect(app, shortJwt)
  const revoked = await connect(app, a1!.key)
  const deleted = await connect(app, a2!.key)
  const kept = await connect(app, a3!.key)

  await app.db.prisma.apiKey.update({ where: { id: a1!.keyId }, data: { revokedAt: new Date() } })
  await app.db.prisma.agent.delete({ where: { id: a2!.id } })
  for (const c of [revoked, deleted, expiring]) {
    const closed = await c.client.closed
    t.equal(closed.code, 4401)
    t.match(closed.reason, /revoked or expired/)
  }
  t.equal(kept.client.ws.readyState, kept.client.ws.OPEN, 'a valid key stays connected')
  await kept.client.close()
})

t.test('keep-alive: pings arrive, a client that never answers is dropped', async (t) => {
  const { app } = await build(t, { env: pingFast })
  const ws = await seedWorkspace(app)
  await listen(app)
  const alive = await connect(app, ws.primary.key)
  let pings = 0
  alive.client.ws.on('ping', () => (pings += 1))
  const mute = await openWs(wsUrl(app, { token: ws.agents[0]!.key }), { autoPong: false })
  const closed = await mute.closed
  t.equal(closed.code, 1006, `terminated without a closing handshake (${JSON.stringify(closed)}, ${JSON.stringify(mute.frames)})`)
  t.ok(pings >= 1, 'the healthy client was pinged')
  t.equal(alive.client.ws.readyState, alive.client.ws.OPEN, 'and is still connected')
  await alive.client.close()
})

t.test('a client that stops reading is disconnected instead of growing memory', async (t) => {
  const { app, api } = await build(t, { env: { WS_MAX_BUFFERED_BYTES: '65536' } })
  const ws = await seedWorkspace(app)
  await disableLoopGuard(app) // a firehose of agent messages: not what this tests
  await listen(app)
  const channel = await createChannelId(api, ws.primary.key, 'firehose', [ws.agents[0]!.id])
  const { client } = await connect(app, ws.agents[0]!.key)
  // Stop reading: the kernel buffers fill, then the server's send queue.
  ;(client.ws as unknown as { _socket: { pause: () => void } })._socket.pause()
  const text = 'x'.repeat(30_000)
  let posted = 0
  while (app.realtimeConnections() > 0 && posted < 2_000) {
    await post(api, ws.primary.key, channel, text)
    posted += 1
  }
  t.equal(app.realtimeConnections(), 0, `cut off after ${posted} messages`)
  t.ok(posted < 2_000)
})

t.test('the sweeper relays outbox events that were committed but never published', async (t) => {
  const { app, api } = await build(t, { env: { OUTBOX_RELAY_INTERVAL_MS: '100', OUTBOX_RELAY_DELAY_MS: '0' } })
  const ws = await seedWorkspace(app)
  await listen(app)
  const channel = await createChannelId(api, ws.primary.key, 'crash', [ws.agents[0]!.id])
  const { client } = await connect(app, ws.agents[0]!.key)
  const sent = await post(api, ws.primary.key, channel, 'template')
  await client.type('new_message')
  // As if the process had died between the commit and the publish: a row nobody relayed.
  const orphan = newEvent('message.updated', channel, { message: { ...sent, text: 'edited before the crash', edited_at: new Date().toISOString() } })
  await app.db.pool.query('INSERT INTO outbox_events (event_id, type, channel_id, payload, occurred_at) VALUES ($1, $2, $3, $4, $5)', outboxRow(orphan))
  const frame = await client.type('message_updated')
  t.equal(frame.event_id, orphan.id)
  t.equal(frame.message.text, 'edited before the crash')
  // The frame can arrive before the sweeper's transaction commits: wait for the commit.
  let published = null
  for (let i = 0; i < 100 && !published; i++) {
    published = (await app.db.pool.query('SELECT published_at FROM outbox_events WHERE event_id = $1', [orphan.id])).rows[0].published_at
    if (!published) await new Promise((resolve) => setTimeout(resolve, 20))
  }
  t.ok(published, 'the sweeper marked it published')
  await client.close()
})

t.test('pruning deletes outbox rows that were relayed and planned, and only those', async (t) => {
  const { app } = await build(t, { env: { OUTBOX_RETENTION_MS: '0' } })
  const insert = async (published: boolean, planned: boolean): Promise<string> => {
    const event = newEvent('agent.connected', null, { agent_id: uuidv7(), agent_name: 'pruned', connected_at: new Date().toISOString() })
    await app.db.pool.query(
      `INSERT INTO outbox_events (event_id, type, channel_id, payload, occurred_at, published_at, planned_at)
       VALUES ($1, $2, $3, $4, now() - interval '1 minute', ${published ? 'now()' : 'NULL'}, ${planned ? 'now()' : 'NULL'})`,
      outboxRow(event).slice(0, 4),
    )
    return event.id
  }
  const done = await insert(true, true)
  const unpublished = await insert(false, true)
  const unplanned = await insert(true, false)
  t.equal(await app.realtime.relay.prune(), 1)
  const left = (await app.db.pool.query<{ event_id: string }>('SELECT event_id::text FROM outbox_events')).rows.map((r) => r.event_id)
  t.notOk(left.includes(done), 'relayed and planned: deleted')
  t.ok(left.includes(unpublished), 'not yet relayed to the broker: kept')
  t.ok(left.includes(unplanned), 'not yet planned into deliveries: kept')
})

t.test('rows younger than OUTBOX_RETENTION_MS are kept', async (t) => {
  const { app } = await build(t, { env: { OUTBOX_RETENTION_MS: '3600000' } })
  const event = newEvent('agent.connected', null, { agent_id: uuidv7(), agent_name: 'pruned', connected_at: new Date().toISOString() })
  await app.db.pool.query(
    `INSERT INTO outbox_events (event_id, type, channel_id, payload, occurred_at, published_at, planned_at)
     VALUES ($1, $2, $3, $4, now() - interval '59 minutes', now(), now())`,
    outboxRow(event).slice(0, 4),
  )
  t.equal(await app.realtime.relay.prune(), 0)
  t.equal((await app.db.pool.query('SELECT 1 FROM outbox_events WHERE event_id = $1', [event.id])).rowCount, 1)
})

t.test('shutdown closes open sockets with 1001 and refuses new ones', async (t) => {
  const { app } = await build(t)
  const ws = await seedWorkspace(app)
  await listen(app)
  const url = wsUrl(app, { token: ws.primary.key })
  const { client } = await connect(app, ws.primary.key)
  const closing = app.close()
  const closed = await client.closed
  t.equal(closed.code, 1001)
  t.match(closed.reason, /shutting down/)
  await closing
  const after = await refusedUpgrade(url).catch((error: Error) => ({ status: 0, body: error.message }))
  t.match(after, { status: 0, body: /ECONNREFUSED/ }, 'the port is closed')
})

t.test('shutdown with sockets open: each member going offline is recorded before PostgreSQL and Redis close, without a warning', { skip: needsRedis() }, async (t) => {
  const lines: string[] = []
  const { app, config } = await build(t, { redis: true, env: { LOG_LEVEL: 'warn' }, logStream: { write: (line: string) => void lines.push(line) } })
  const ws = await seedWorkspace(app, 6)
  await listen(app)
  const ids = ws.agents.map((a) => a.id)
  const clients = await Promise.all(ws.agents.map((a) => connect(app, a.key)))
  const db = new pg.Pool({ connectionString: config.databaseUrl, max: 2 })
  t.teardown(() => db.end())
  const seenSince = async (at: Date): Promise<number> =>
    (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM agents WHERE id = ANY($1::uuid[]) AND last_seen_at >= $2', [ids, at])).rows[0]!.n
  // Every agent online (its connect recorded) before the stop.
  for (let i = 0; i < 500 && (await seenSince(new Date(0))) < ids.length; i++) await new Promise((resolve) => setTimeout(resolve, 10))
  t.equal(await seenSince(new Date(0)), ids.length, 'every agent connected and seen')

  // Hold the agents' rows so that the first last_seen_at write waits and the other members'
  // writes queue behind it (as 10,000 sockets closing at once do): the stop must wait for them
  // all before it closes the pool, instead of leaving them to fail on a closed pool.
  const locker = await db.connect()
  await locker.query('BEGIN')
  await locker.query('SELECT 1 FROM agents WHERE id = ANY($1::uuid[]) FOR UPDATE', [ids])
  const stopping = new Date()
  const closing = app.close()
  for (const { client } of clients) t.equal((await client.closed).code, 1001)
  await new Promise((resolve) => setTimeout(resolve, 300))
  await locker.query('COMMIT')
  locker.release()
  await closing
  t.equal(await seenSince(stopping), ids.length, 'last_seen_at holds the moment each went offline, written before the pool closed')
  t.same(
    lines.filter((l) => /"level":(40|50)/.test(l)),
    [],
    'no warning, no error',
  )
})
