import t from 'tap'
import { needsRedis } from '../setup/services.ts'
import { build } from '../helper.ts'

t.test('GET /health reports a live database and disabled Redis in single-node mode', async (t) => {
  const { api } = await build(t)
  const res = await api({ method: 'GET', url: '/health' })
  t.equal(res.statusCode, 200)
  t.same(res.json(), { status: 'ok', database: 'connected', redis: 'disabled' })
})

t.test('GET /health/ready answers 200 ready in single-node mode (through the contract-checked helper)', async (t) => {
  const { api } = await build(t)
  const res = await api({ method: 'GET', url: '/health/ready' })
  t.equal(res.statusCode, 200)
  t.same(res.json(), { status: 'ready', database: 'connected', redis: 'disabled' })
})

t.test('GET /health reports Redis connected when REDIS_URL is set', { skip: needsRedis() }, async (t) => {
  const { api } = await build(t, { redis: true })
  const res = await api({ method: 'GET', url: '/health' })
  t.same(res.json(), { status: 'ok', database: 'connected', redis: 'connected' })
})

t.test('GET /health reports degraded when Redis is unreachable', async (t) => {
  const { api } = await build(t, { env: { REDIS_URL: 'redis://127.0.0.1:1' } })
  const res = await api({ method: 'GET', url: '/health' })
  t.equal(res.statusCode, 200)
  t.same(res.json(), { status: 'degraded', database: 'connected', redis: 'disconnected' })
})

t.test('unknown routes answer 404 {error, code}', async (t) => {
  const { app } = await build(t)
  const res = await app.inject({ method: 'GET', url: '/api/v1/nope' })
  t.equal(res.statusCode, 404)
  t.same(Object.keys(res.json()).sort(), ['code', 'error'])
  t.equal(res.json().code, 'NOT_FOUND')
})
