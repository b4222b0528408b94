// GET /health/ready over real HTTP: 200 when the database (and Redis, when configured) answer;
// 503 while either is down and 200 again once it is back, without a restart; 503 during
// shutdown. The outages are made on this test's own database (connections refused and cut) and
// on a private redis-server, never on the shared services.
import t, { type Test } from 'tap'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import pg from 'pg'
import { buildApp } from '../../src/app.ts'
import { build, testConfig } from '../helper.ts'
import { assertMatchesOpenApi } from '../openapi-validator.ts'
import { freePort, startRedis } from '../processes.ts'
import { TEST_DATABASE_URL } from '../setup/database.ts'

interface Answer {
  status: number
  headers: Headers
  body: Record<string, unknown>
}

async function listen(app: FastifyInstance): Promise<string> {
  return app.listen({ host: '127.0.0.1', port: 0 })
}

/** A real HTTP GET, its answer checked against the committed OpenAPI document. */
async function get(base: string, path: string): Promise<Answer> {
  const res = await fetch(`${base}${path}`)
  const text = await res.text()
  const headers: Record<string, string> = {}
  res.headers.forEach((value, key) => (headers[key] = value))
  const asInjected = { statusCode: res.status, headers, body: text, json: () => JSON.parse(text) as unknown }
  assertMatchesOpenApi('GET', path, asInjected as unknown as LightMyRequestResponse) // only these four members are read
  return { status: res.status, headers: res.headers, body: JSON.parse(text) as Record<string, unknown> }
}

/** Polls until `path` answers `status` (dependencies come back on their own schedule). */
async function until(base: string, path: string, status: number, seconds = 20): Promise<Answer> {
  const deadline = Date.now() + seconds * 1_000
  for (;;) {
    const answer = await get(base, path)
    if (answer.status === status || Date.now() > deadline) return answer
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL })
  await client.connect()
  try {
    return await fn(client)
  } finally {
    await client.end()
  }
}

/** Makes this test's database refuse connections and cuts the open ones; returns the undo. */
async function takeDatabaseDown(t: Test, databaseUrl: string): Promise<() => Promise<void>> {
  const name = decodeURIComponent(new URL(databaseUrl).pathname.slice(1))
  t.ok(name.startsWith('ams_test_'), 'only a database this test created is touched')
  const up = () =>
    admin(async (c) => {
      // Also a teardown, which may run after build(t)'s own has dropped the database.
      const { rowCount } = await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])
      if (rowCount) await c.query(`ALTER DATABASE "${name}" WITH ALLOW_CONNECTIONS true`)
    })
  t.teardown(up)
  await admin(async (c) => {
    await c.query(`ALTER DATABASE "${name}" WITH ALLOW_CONNECTIONS false`)
    await c.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name])
  })
  return up
}

t.test('ready in single-node mode: database connected, Redis disabled', async (t) => {
  const { app } = await build(t, { background: false })
  const base = await listen(app)
  const res = await get(base, '/health/ready')
  t.equal(res.status, 200)
  t.same(res.body, { status: 'ready', database: 'connected', redis: 'disabled' })
  t.equal(res.headers.get('cache-control'), 'no-store')
})

t.test('ready in multi-instance mode with Redis connected', async (t) => {
  const { app } = await build(t, { redis: true, background: false })
  const base = await listen(app)
  const res = await get(base, '/health/ready')
  t.equal(res.status, 200)
  t.same(res.body, { status: 'ready', database: 'connected', redis: 'connected' })
})

t.test('503 while the database is unreachable, 200 again once it is back, no restart', async (t) => {
  const { app, config } = await build(t, { background: false })
  const base = await listen(app)
  t.equal((await get(base, '/health/ready')).status, 200)

  const bringBack = await takeDatabaseDown(t, config.databaseUrl)
  const down = await get(base, '/health/ready')
  t.equal(down.status, 503)
  t.same(down.body, { status: 'unavailable', database: 'disconnected', redis: 'disabled' })
  // The spec's /health keeps answering 200 and says what is wrong.
  const health = await get(base, '/health')
  t.equal(health.status, 200)
  t.same(health.body, { status: 'degraded', database: 'disconnected', redis: 'disabled' })

  await bringBack()
  const up = await until(base, '/health/ready', 200)
  t.equal(up.status, 200)
  t.same(up.body, { status: 'ready', database: 'connected', redis: 'disabled' })
})

t.test('503 while Redis is unreachable in multi-instance mode, 200 once it is back', async (t) => {
  const port = await freePort()
  const redis = startRedis(t, port)
  const config = await testConfig(t, { env: { REDIS_URL: `redis://127.0.0.1:${port}`, REDIS_PREFIX: `ams:test:ready:${port}:` } })
  // The app may start before redis-server listens: ioredis connects when it can.
  const app = await buildApp(config, { background: false })
  t.teardown(() => app.close())
  const base = await listen(app)
  t.equal((await until(base, '/health/ready', 200)).status, 200, 'ready once the private Redis answers')

  redis.proc.kill('SIGKILL')
  await redis.exited
  const down = await until(base, '/health/ready', 503)
  t.equal(down.status, 503)
  t.same(down.body, { status: 'unavailable', database: 'connected', redis: 'disconnected' })
  t.same((await get(base, '/health')).body, { status: 'degraded', database: 'connected', redis: 'disconnected' })

  startRedis(t, port) // stopped by its own teardown
  const up = await until(base, '/health/ready', 200)
  t.equal(up.status, 200)
  t.same(up.body, { status: 'ready', database: 'connected', redis: 'connected' })
})

t.test('503 with an unreachable REDIS_URL from the start', async (t) => {
  const { app } = await build(t, { env: { REDIS_URL: 'redis://127.0.0.1:1' }, background: false })
  const base = await listen(app)
  const res = await get(base, '/health/ready')
  t.equal(res.status, 503)
  t.same(res.body, { status: 'unavailable', database: 'connected', redis: 'disconnected' })
})

t.test('503 once shutdown has begun, to a probe on a connection still open', async (t) => {
  // The stop waits a quarter of SHUTDOWN_TIMEOUT_MS for kept-alive connections to close: a load
  // balancer's probe on one meanwhile gets through, is told the server is stopping, and its
  // connection then closes, which ends the wait.
  const config = await testConfig(t, { env: { SHUTDOWN_TIMEOUT_MS: '20000' } })
  const app = await buildApp(config, { background: false })
  const base = await listen(app)
  t.equal((await get(base, '/health/ready')).status, 200)

  const closed = app.close()
  while (app.shutdown.startedAt === null) await new Promise((resolve) => setTimeout(resolve, 5))
  const res = await get(base, '/health/ready')
  t.equal(res.status, 503)
  t.equal(res.body.status, 'shutting_down', `shutdown answer: ${JSON.stringify(res.body)}`)
  t.equal(res.headers.get('connection'), 'close', 'and the connection closes after it')
  const started = Date.now()
  await closed
  t.ok(Date.now() - started < 5_000, 'the stop ended with that connection, not at the end of its 5 s wait')
})

t.test('probes are not rate-limited', async (t) => {
  const { app } = await build(t, { env: { RATE_LIMIT_PER_MINUTE: '2' }, background: false })
  const base = await listen(app)
  for (let i = 0; i < 4; i++) t.equal((await get(base, '/health/ready')).status, 200, `probe ${i + 1}`)
  const statuses: number[] = []
  for (let i = 0; i < 3; i++) {
    const res = await fetch(`${base}/api/v1/channels`)
    await res.arrayBuffer()
    statuses.push(res.status)
  }
  t.same(statuses, [401, 401, 429], 'while API requests over the limit are refused')
})
