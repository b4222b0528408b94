import t from 'tap'
import { needsRedis } from '../setup/services.ts'
import { build } from '../helper.ts'
import { bearer, seedWorkspace } from '../support/index.ts'

t.test('off by default: many requests, no 429, no rate-limit headers', async (t) => {
  const { app, api } = await build(t)
  const ws = await seedWorkspace(app)
  for (let i = 0; i < 30; i++) {
    const res = await api({ method: 'GET', url: '/api/v1/agents', headers: bearer(ws.primary.key) })
    t.equal(res.statusCode, 200)
    t.notOk(res.headers['retry-after'])
  }
  t.same((await api({ method: 'GET', url: '/api/v1/workspace', headers: bearer(ws.owner.token) })).json().effective_rate_limit_per_minute, 0)
})

t.test('RATE_LIMIT_PER_MINUTE: the workspace budget of authenticated callers, 429 {error, code} with Retry-After', async (t) => {
  const { app, api } = await build(t, { env: { RATE_LIMIT_PER_MINUTE: '5' } })
  const ws = await seedWorkspace(app)
  const seen = []
  seen.push((await api({ method: 'GET', url: '/api/v1/agents', headers: bearer(ws.primary.key) })).statusCode)
  seen.push((await api({ method: 'GET', url: '/api/v1/agents', headers: bearer(ws.member.token) })).statusCode)
  // unauthenticated requests (401s, anonymous 404s) have their own budget (test/hardening/strangers.test.ts)
  seen.push((await api({ method: 'GET', url: '/api/v1/agents' })).statusCode)
  seen.push((await app.inject({ method: 'GET', url: '/api/v1/no-such-route' })).statusCode)
  seen.push((await api({ method: 'GET', url: '/api/v1/agents/me', headers: bearer(ws.agents[0]!.key) })).statusCode)
  seen.push((await app.inject({ method: 'GET', url: '/api/v1/no-such-route', headers: bearer(ws.agents[0]!.key) })).statusCode)
  seen.push((await api({ method: 'GET', url: '/api/v1/workspace', headers: bearer(ws.owner.token) })).statusCode)
  t.same(seen, [200, 200, 401, 404, 200, 404, 200], 'five authenticated requests, an authenticated 404 included')

  // /health and the documentation are not API requests and stay available
  t.equal((await api({ method: 'GET', url: '/health' })).statusCode, 200)
  t.equal((await app.inject({ method: 'GET', url: '/openapi.json' })).statusCode, 200)

  const limited = await api({ method: 'GET', url: '/api/v1/agents', headers: bearer(ws.primary.key) })
  t.equal(limited.statusCode, 429)
  t.same(Object.keys(limited.json()).sort(), ['code', 'error'])
  t.equal(limited.json().code, 'RATE_LIMITED')
  const retryAfter = Number(limited.headers['retry-after'])
  t.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After ${limited.headers['retry-after']}`)
  t.equal(limited.headers['x-ratelimit-limit'], '5')

  // the budget is per workspace: another caller and an authenticated unknown route are limited too
  const other = await api({ method: 'GET', url: '/api/v1/agents', headers: bearer(ws.owner.token) })
  t.equal(other.statusCode, 429)
  const notFound = await app.inject({ method: 'GET', url: '/api/v1/no-such-route', headers: bearer(ws.member.token) })
  t.equal(notFound.statusCode, 429)
  t.equal(notFound.json().code, 'RATE_LIMITED')
  t.ok(notFound.headers['retry-after'])
})

t.test('the workspace setting overrides the default without a restart; owner only', async (t) => {
  const { app, api } = await build(t)
  const ws = await seedWorkspace(app)
  const url = '/api/v1/workspace'

  const got = await api({ method: 'GET', url, headers: bearer(ws.primary.key) })
  t.equal(got.statusCode, 200)
  t.same(
    { ...got.json(), instance_id: 'x', bootstrapped_at: 'x' },
    {
      instance_id: 'x',
      bootstrapped_at: 'x',
      rate_limit_per_minute: null,
      effective_rate_limit_per_minute: 0,
      registration_mode: 'approval',
      loop_guard_enabled: true,
      loop_guard_max_turns: 20,
      loop_guard_window_seconds: 60,
      loop_guard_max_depth: 20,
      max_file_bytes: 10_485_760,
    },
  )
  t.equal((await api({ method: 'GET', url })).statusCode, 401)

  for (const token of [ws.primary.key, ws.member.token]) {
    t.equal((await api({ method: 'PATCH', url, headers: bearer(token), payload: { rate_limit_per_minute: 1 } })).statusCode, 403)
  }
  for (const payload of [{}, { rate_limit_per_minute: -1 }, { rate_limit_per_minute: 1.5 }, { rate_limit_per_minute: 'x' }, { rate_limit_per_minute: 2_000_000 }, { other: 1 }]) {
    t.equal((await api({ method: 'PATCH', url, headers: bearer(ws.owner.token), payload })).statusCode, 400, JSON.stringify(payload))
  }
  t.equal((await app.db.prisma.instance.findFirstOrThrow()).rateLimitPerMinute, null, 'unchanged by refused calls')

  const set = await api({ method: 'PATCH', url, headers: bearer(ws.owner.token), payload: { rate_limit_per_minute: 3 } })
  t.equal(set.statusCode, 200)
  t.equal(set.json().rate_limit_per_minute, 3)
  t.equal(set.json().effective_rate_limit_per_minute, 3)

  const codes = []
  for (let i = 0; i < 4; i++) codes.push((await api({ method: 'GET', url: '/api/v1/agents', headers: bearer(ws.primary.key) })).statusCode)
  t.same(codes, [200, 200, 200, 429], 'in force at once')

  // The owner's PATCH is never limited, so the owner can always lift the limit.
  const lifted = await api({ method: 'PATCH', url, headers: bearer(ws.owner.token), payload: { rate_limit_per_minute: 0 } })
  t.equal(lifted.statusCode, 200)
  t.equal((await api({ method: 'GET', url: '/api/v1/agents', headers: bearer(ws.primary.key) })).statusCode, 200, '0 turns it off')

  const cleared = await api({ method: 'PATCH', url, headers: bearer(ws.owner.token), payload: { rate_limit_per_minute: null } })
  t.equal(cleared.json().rate_limit_per_minute, null)
  t.equal(cleared.json().effective_rate_limit_per_minute, 0, 'null falls back to RATE_LIMIT_PER_MINUTE')
})

t.test('workspace before bootstrap → 404', async (t) => {
  const { app, api } = await build(t)
  const ws = await seedWorkspace(app)
  await app.db.prisma.instance.deleteMany()
  const res = await api({ method: 'GET', url: '/api/v1/workspace', headers: bearer(ws.owner.token) })
  t.equal(res.statusCode, 404)
})

t.test('with Redis the budget is shared by every instance of the workspace', { skip: needsRedis() }, async (t) => {
  const first = await build(t, { redis: true, env: { RATE_LIMIT_PER_MINUTE: '4' } })
  const second = await build(t, { redis: true, env: { RATE_LIMIT_PER_MINUTE: '4' }, databaseUrl: first.config.databaseUrl, redisPrefix: first.config.redisPrefix })
  const ws = await seedWorkspace(first.app)
  const headers = bearer(ws.primary.key)
  const codes = []
  for (const { api } of [first, second, first, second, first, second]) codes.push((await api({ method: 'GET', url: '/api/v1/agents', headers })).statusCode)
  t.same(codes, [200, 200, 200, 200, 429, 429])
  const keys = await first.app.redis!.keys(`${first.config.redisPrefix}rate-limit:*`)
  t.same(keys, [`${first.config.redisPrefix}rate-limit:workspace`], 'one counter, under the app prefix')
  const limited = await second.api({ method: 'GET', url: '/api/v1/agents', headers })
  t.ok(Number(limited.headers['retry-after']) >= 1)
  await first.app.redis!.del(keys)
})

t.test('a Redis outage lets requests through instead of failing them', async (t) => {
  const { app, api } = await build(t, { env: { RATE_LIMIT_PER_MINUTE: '2', REDIS_URL: 'redis://127.0.0.1:1' } })
  const ws = await seedWorkspace(app)
  const codes = []
  for (let i = 0; i < 4; i++) codes.push((await api({ method: 'GET', url: '/api/v1/agents', headers: bearer(ws.primary.key) })).statusCode)
  t.same(codes, [200, 200, 200, 200])
})
