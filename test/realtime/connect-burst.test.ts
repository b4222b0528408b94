// Many sockets connecting at once (issue 27, start-up under load): each socket's start asks
// PostgreSQL for its channels, writes last_seen_at, logs agent.connected and tells its channels
// it is online. Asked together (src/lib/batched.ts), a burst costs a few statements rather than
// a few per socket, nothing is lost, and nothing is logged as a warning.
import t from 'tap'
import type pg from 'pg'
import { build, createChannel, addMember, seedWorkspace } from '../support/index.ts'
import { connect, listen, type WsClient } from './helpers.ts'

const SOCKETS = 40
const IDLE_EVENTS_STATEMENT = 'WITH idle AS ('

t.test(`${SOCKETS} agents connecting at once: every one online, seen and announced once, in a few statements, without a warning`, async (t) => {
  const lines: string[] = []
  const c = await build(t, { env: { LOG_LEVEL: 'warn' }, logStream: { write: (line: string) => void lines.push(line) } })
  const ws = await seedWorkspace(c.app, SOCKETS)
  const ch = await createChannel(c.api, ws.agents[0]!.key, 'burst')
  for (const a of ws.agents.slice(1)) await addMember(c.api, ws.agents[0]!.key, ch.id, a.id)
  await addMember(c.api, ws.agents[0]!.key, ch.id, ws.member.id)
  await listen(c.app)
  const watcher = (await connect(c.app, ws.member.token)).client
  t.teardown(() => watcher.close().then(() => {}))

  // Count the statements the burst sends on the pool. The delivery planner's pass over the outbox
  // (one statement per run, kicked by the burst's commits: src/workers/repo.ts markIdleEvents) is
  // background work, not the burst's; its transaction, on a client of its own, was never counted.
  const pool = c.app.db.pool as unknown as { query: (...args: unknown[]) => Promise<pg.QueryResult> }
  const original = pool.query.bind(pool)
  const query = <R extends pg.QueryResultRow>(text: string, values: unknown[]) => original(text, values) as Promise<pg.QueryResult<R>>
  let statements = 0
  pool.query = (...args: unknown[]) => {
    if (!(typeof args[0] === 'string' && args[0].startsWith(IDLE_EVENTS_STATEMENT))) statements++
    return original(...args)
  }
  const before = new Date()
  const clients: WsClient[] = (await Promise.all(ws.agents.map((a) => connect(c.app, a.key)))).map((r) => r.client)
  t.teardown(() => Promise.all(clients.map((cl) => cl.close())).then(() => {}))

  // The member watching the channel hears each of them come online, once.
  const ids = new Set(ws.agents.map((a) => a.id))
  for (const id of ids) await watcher.type('presence', (f) => f.member_id === id && f.online === true)
  t.equal(watcher.frames.filter((f) => f.type === 'presence' && f.online === true && ids.has(f.member_id)).length, SOCKETS, 'one presence frame each')

  const seen = await query<{ n: number }>('SELECT count(*)::int AS n FROM agents WHERE id = ANY($1::uuid[]) AND last_seen_at >= $2', [[...ids], before])
  t.equal(seen.rows[0]!.n, SOCKETS, 'last_seen_at written for every agent')
  const deadline = Date.now() + 10_000
  let announced = 0
  while (Date.now() < deadline) {
    const r = await query<{ n: number }>("SELECT count(DISTINCT payload->>'agent_id')::int AS n FROM outbox_events WHERE type = 'agent.connected' AND payload->>'agent_id' = ANY($1)", [[...ids]])
    announced = r.rows[0]!.n
    if (announced === SOCKETS) break
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  t.equal(announced, SOCKETS, 'agent.connected logged for every agent')
  t.ok(statements < SOCKETS * 2, `the burst asked together (${statements} statements for ${SOCKETS} sockets, their credentials looked up one by one included)`)
  t.same(
    lines.filter((l) => /"level":(40|50)/.test(l)),
    [],
    'no warning, no error',
  )
})
