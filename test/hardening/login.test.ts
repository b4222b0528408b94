// Issue 14, item 14: failed logins are limited per account and per client address (429 with
// Retry-After, before any bcrypt work), and the bcrypt queue is bounded (503 with Retry-After
// when full) so logins cannot be used as a CPU lever.
import t, { type Test } from 'tap'
import { build } from '../helper.ts'
import { FIXTURE_PASSWORD, seedWorkspace } from '../support/index.ts'

const login = (api: Awaited<ReturnType<typeof build>>['api'], email: string, password: string, remoteAddress = '127.0.0.1') =>
  api({ method: 'POST', url: '/api/v1/auth/login', remoteAddress, headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ email, password }) })

const isLimited = (t: Test, res: { statusCode: number; json: () => any; headers: Record<string, unknown> }, what: string) => {
  t.equal(res.statusCode, 429, what)
  t.same(Object.keys(res.json()).sort(), ['code', 'error'])
  t.equal(res.json().code, 'RATE_LIMITED')
  const retryAfter = Number(res.headers['retry-after'])
  t.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 900, `Retry-After ${res.headers['retry-after']}`)
}

for (const redis of [false, true]) {
  t.test(`per account (${redis ? 'Redis' : 'memory'}): after N failures 429 even with the right password; other accounts unaffected`, async (t) => {
    const { app, api } = await build(t, { redis, env: { LOGIN_FAILURES_PER_ACCOUNT: '3', LOGIN_FAILURES_PER_ADDRESS: '100' } })
    const ws = await seedWorkspace(app)
    for (let i = 0; i < 3; i++) t.equal((await login(api, ws.owner.email, 'wrong password here', `10.0.0.${i + 1}`)).statusCode, 401)
    isLimited(t, await login(api, ws.owner.email, 'wrong password here'), 'fourth failure')
    isLimited(t, await login(api, ws.owner.email.toUpperCase(), FIXTURE_PASSWORD), 'the right password too, whatever the case of the e-mail')
    t.equal((await login(api, ws.member.email, FIXTURE_PASSWORD)).statusCode, 200, 'another account logs in from the same address')
  })
}

t.test('per client address: N failures from one address (any e-mails) → 429 there, other addresses unaffected', async (t) => {
  const { app, api } = await build(t, { env: { LOGIN_FAILURES_PER_ACCOUNT: '100', LOGIN_FAILURES_PER_ADDRESS: '3' } })
  const ws = await seedWorkspace(app)
  for (let i = 0; i < 3; i++) t.equal((await login(api, `nobody${i}@example.com`, 'wrong password here', '10.1.1.1')).statusCode, 401)
  isLimited(t, await login(api, ws.member.email, FIXTURE_PASSWORD, '10.1.1.1'), 'the limited address')
  t.equal((await login(api, ws.member.email, FIXTURE_PASSWORD, '10.1.1.2')).statusCode, 200, 'another address')
})

t.test('a successful login clears the account count', async (t) => {
  const { app, api } = await build(t, { env: { LOGIN_FAILURES_PER_ACCOUNT: '3' } })
  const ws = await seedWorkspace(app)
  for (let i = 0; i < 2; i++) t.equal((await login(api, ws.owner.email, 'wrong password here')).statusCode, 401)
  t.equal((await login(api, ws.owner.email, FIXTURE_PASSWORD)).statusCode, 200)
  for (let i = 0; i < 2; i++) t.equal((await login(api, ws.owner.email, 'wrong password here')).statusCode, 401, 'counting starts again')
})

t.test('the bcrypt queue is bounded: a flood of logins gets 503 + Retry-After, never 500, and logins work after', async (t) => {
  const { app, api } = await build(t, { realPasswordCost: true, env: { LOGIN_FAILURES_PER_ACCOUNT: '1000', LOGIN_FAILURES_PER_ADDRESS: '1000' } })
  const ws = await seedWorkspace(app)
  const flood = await Promise.all(Array.from({ length: 120 }, (_, i) => login(api, `flood${i}@example.com`, 'wrong password here')))
  const statuses = flood.map((r) => r.statusCode)
  t.same([...new Set(statuses)].sort(), [401, 503], 'only 401 and 503')
  for (const res of flood.filter((r) => r.statusCode === 503)) {
    t.same(res.json(), { error: res.json().error, code: 'SERVICE_UNAVAILABLE' })
    t.equal(res.headers['retry-after'], '1')
  }
  t.ok(statuses.filter((s) => s === 503).length >= 50, `most of the flood was refused at once (${statuses.filter((s) => s === 503).length})`)
  t.equal((await login(api, ws.owner.email, FIXTURE_PASSWORD)).statusCode, 200, 'a login works once the queue drains')
})
