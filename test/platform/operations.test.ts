// Operations: the request id echoed on every response (and in the 5xx log line), /metrics behind
// its token with counters that move during a scenario, and load shedding with 503 + Retry-After.
import { Writable } from 'node:stream'
import t from 'tap'
import { buildApp } from '../../src/app.ts'
import { build, testConfig } from '../helper.ts'
import { connect, listen } from '../realtime/helpers.ts'
import { createWebhook, eventually, FAST_ENV, receiver } from '../webhooks/helpers.ts'
import { bearer, createChannelId, post, seedWorkspace, UUID_RE } from '../support/index.ts'

const TOKEN = 'metrics-token-0123456789'

/** The value of one sample in Prometheus text, or 0 when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue
    const match = /^([a-zA-Z_:][\w:]*)(\{(.*)\})? (\S+)$/.exec(line)
    if (!match || match[1] !== name) continue
    const got = Object.fromEntries([...(match[3] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]))
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(match[4])
  }
  return 0
}

t.test('X-Request-Id on every response, errors included; a given id is kept', async (t) => {
  const { api } = await build(t)
  for (const [url, status] of [
    ['/health', 200],
    ['/nope', 404],
    ['/api/v1/agents', 401],
  ] as const) {
    const res = await api({ method: 'GET', url })
    t.equal(res.statusCode, status, url)
    t.match(res.headers['x-request-id'], UUID_RE, `${url}: a generated id`)
  }
  const bad = await api({ method: 'POST', url: '/api/v1/auth/login', headers: { 'content-type': 'application/json' }, payload: '{nope' })
  t.equal(bad.statusCode, 400)
  t.match(bad.headers['x-request-id'], UUID_RE, 'on a body parse error')
  const given = await api({ method: 'GET', url: '/health', headers: { 'x-request-id': 'trace-abc-123' } })
  t.equal(given.headers['x-request-id'], 'trace-abc-123')
})

t.test('a 500 names its request id in the header and in the error log line', async (t) => {
  const lines: string[] = []
  const logStream = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk))
      done()
    },
  })
  const config = await testConfig(t, { env: { LOG_LEVEL: 'error' } })
  const app = await buildApp(config, { background: false, logStream: { write: (line: string) => void logStream.write(line) } })
  t.teardown(() => app.close())
  app.get('/boom', async () => {
    throw new Error('kaboom')
  })
  await app.ready()
  const res = await app.inject({ method: 'GET', url: '/boom' })
  t.equal(res.statusCode, 500)
  t.same(res.json(), { error: 'internal server error', code: 'INTERNAL_ERROR' })
  const id = res.headers['x-request-id'] as string
  t.match(id, UUID_RE)
  const logged = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.level === 50)
  t.equal(logged.length, 1, 'one error line')
  t.equal(logged[0]!.reqId, id, 'the log line carries the same id')
  t.notMatch(JSON.stringify(res.json()), /kaboom/, 'the body leaks nothing')
})

t.test('/metrics: the bearer token when METRICS_TOKEN is set; loopback only when unset', async (t) => {
  const withToken = await build(t, { background: false, env: { METRICS_TOKEN: TOKEN } })
  for (const headers of [{}, bearer('wrong-token-0123456789'), { authorization: TOKEN }]) {
    const res = await withToken.app.inject({ method: 'GET', url: '/metrics', headers })
    t.equal(res.statusCode, 401)
    t.same(res.json(), { error: 'missing or invalid metrics token', code: 'UNAUTHORIZED' })
  }
  const ok = await withToken.app.inject({ method: 'GET', url: '/metrics', headers: bearer(TOKEN) })
  t.equal(ok.statusCode, 200)
  t.match(ok.headers['content-type'], /^text\/plain; version=0\.0\.4/)
  t.match(ok.body, /# TYPE ams_http_request_duration_seconds histogram/)

  const open = await build(t, { background: false })
  t.equal((await open.app.inject({ method: 'GET', url: '/metrics', remoteAddress: '127.0.0.1' })).statusCode, 200, 'loopback')
  const remote = await open.app.inject({ method: 'GET', url: '/metrics', remoteAddress: '10.1.2.3' })
  t.equal(remote.statusCode, 401, 'another address')
  t.equal(remote.json().code, 'UNAUTHORIZED')
})

t.test('counters move: a post, its fan-out to a socket, its webhook delivery, the HTTP histogram', async (t) => {
  const { app, api } = await build(t, { env: { ...FAST_ENV, METRICS_TOKEN: TOKEN } })
  const scrape = async (): Promise<string> => (await app.inject({ method: 'GET', url: '/metrics', headers: bearer(TOKEN) })).body
  const ws = await seedWorkspace(app)
  const [a1, a2] = ws.agents
  await listen(app)
  const rx = await receiver(t)
  await createWebhook(api, a1!.key, a1!.id, rx.url('/hook'))
  const channel = await createChannelId(api, a2!.key, 'metrics', [a1!.id])

  const before = await scrape()
  t.equal(sample(before, 'ams_websocket_connections'), 0)
  const { client } = await connect(app, a1!.key)
  t.teardown(() => client.close())
  const during = await scrape()
  t.equal(sample(during, 'ams_websocket_connections'), 1, 'one open socket')

  await post(api, a2!.key, channel, 'counted')
  await client.type('new_message')
  await rx.waitFor(1)
  const after = await eventually(async () => {
    const text = await scrape()
    return sample(text, 'ams_deliveries_total', { kind: 'webhook', outcome: 'delivered' }) >= 1 ? text : null
  }, 'the delivery counted')

  t.equal(sample(after, 'ams_messages_created_total') - sample(before, 'ams_messages_created_total'), 1, 'messages +1')
  t.equal(sample(after, 'ams_events_committed_total', { type: 'message.created' }) - sample(before, 'ams_events_committed_total', { type: 'message.created' }), 1)
  t.ok(sample(after, 'ams_events_fanned_out_total') > sample(before, 'ams_events_fanned_out_total'), 'fanned out')
  t.ok(sample(after, 'ams_broker_lag_seconds_count') > sample(before, 'ams_broker_lag_seconds_count'), 'broker lag observed')
  t.equal(sample(after, 'ams_deliveries_total', { kind: 'webhook', outcome: 'delivered' }), 1, 'one webhook delivered')
  const route = { method: 'POST', route: '/api/v1/channels/:id/messages', status_code: '201' }
  t.equal(sample(after, 'ams_http_request_duration_seconds_count', route) - sample(before, 'ams_http_request_duration_seconds_count', route), 1, 'one POST …/messages 201')
  t.equal(sample(after, 'ams_pg_pool_max'), 4)
  t.ok(sample(after, 'ams_pg_pool_connections', { state: 'total' }) >= 1)
  t.match(after, /ams_outbox_backlog\{stage="unpublished"\} \d+/)
  t.match(after, /ams_delivery_queue_depth\{state="due"\} \d+/)
  const unmatched = await app.inject({ method: 'GET', url: `/random/${Date.now()}` })
  t.equal(unmatched.statusCode, 404)
  t.equal(sample(await scrape(), 'ams_http_request_duration_seconds_count', { route: 'unmatched', status_code: '404' }), 1, 'unknown paths share one label')
})

t.test('under pressure: 503 {error, code} with Retry-After; /health and /metrics still answer', async (t) => {
  const { app, api } = await build(t, { background: false, env: { PRESSURE_MAX_HEAP_USED_BYTES: '1', PRESSURE_RETRY_AFTER_SECONDS: '7' } })
  // app.inject: the committed OpenAPI document does not list 503 on every route (yet).
  const res = await eventually(async () => {
    const r = await app.inject({ method: 'GET', url: '/api/v1/agents' })
    return r.statusCode === 503 ? r : null
  }, 'the first pressure sample')
  t.same(res.json(), { error: 'the server is overloaded; retry later', code: 'SERVICE_UNAVAILABLE' })
  t.equal(res.headers['retry-after'], '7')
  t.match(res.headers['x-request-id'], UUID_RE)
  t.equal((await api({ method: 'GET', url: '/health' })).statusCode, 200)
  t.equal((await app.inject({ method: 'GET', url: '/metrics' })).statusCode, 200)
})
