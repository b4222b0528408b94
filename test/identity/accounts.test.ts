import { createHmac } from 'node:crypto'
import t from 'tap'
import { build, TEST_JWT_SECRET } from '../helper.ts'
import { bootstrapBody, JWT_RE, rowCounts } from './fixtures/support.ts'
import { bearer, FIXTURE_PASSWORD, seedWorkspace, UUID_RE } from '../support/index.ts'

const PASSWORD = 'a-long-enough-password'

t.test('register is closed before bootstrap (403), so a stranger cannot block bootstrap', async (t) => {
  const { app, api } = await build(t)
  const res = await api({ method: 'POST', url: '/api/v1/auth/register', payload: { email: 'stranger@example.com', password: PASSWORD, display_name: 'S' } })
  t.equal(res.statusCode, 403)
  t.equal(res.json().code, 'FORBIDDEN')
  t.equal((await rowCounts(app)).users, 0)
  const boot = await api({ method: 'POST', url: '/api/v1/bootstrap', payload: bootstrapBody() })
  t.equal(boot.statusCode, 201, 'bootstrap still works after the refused registration')
  const after = await api({ method: 'POST', url: '/api/v1/auth/register', payload: { email: 'stranger@example.com', password: PASSWORD, display_name: 'S' } })
  t.equal(after.statusCode, 201, 'and registration opens with the workspace')
})

t.test('register after bootstrap creates a member who can log in (and, awaiting approval by default, read GET /auth/me: test/hardening/strangers.test.ts)', async (t) => {
  const { app, api } = await build(t, { realPasswordCost: true })
  await seedWorkspace(app)
  const res = await api({ method: 'POST', url: '/api/v1/auth/register', payload: { email: 'New.User@Example.com', password: PASSWORD, display_name: ' New User ' } })
  t.equal(res.statusCode, 201, res.body)
  const body = res.json()
  t.match(body.id, UUID_RE)
  t.equal(body.email, 'new.user@example.com')
  t.equal(body.display_name, 'New User')
  t.equal(body.role, 'member')
  t.notOk('password' in body || 'password_hash' in body)
  const stored = await app.db.prisma.user.findUniqueOrThrow({ where: { id: body.id } })
  t.match(stored.passwordHash, /^\$2[aby]\$12\$/)
  t.notOk(stored.isOwner)

  const login = await api({ method: 'POST', url: '/api/v1/auth/login', payload: { email: 'NEW.USER@example.com', password: PASSWORD } })
  t.equal(login.statusCode, 200)
  const session = login.json()
  t.match(session.token, JWT_RE)
  t.equal(session.user_id, body.id)
  t.equal(session.email, 'new.user@example.com')
  t.equal(session.role, 'member')
  t.equal(session.is_owner, false)
  const claims = app.jwt.decode<{ exp: number; iat: number; sub: string }>(session.token)!
  t.equal(claims.exp - claims.iat, 86_400, '24 hours')
  t.equal(new Date(claims.exp * 1000).toISOString(), session.expires_at)
  const me = await api({ method: 'GET', url: '/api/v1/auth/me', headers: bearer(session.token) })
  t.same(me.json(), { type: 'HUMAN', id: body.id, email: 'new.user@example.com', display_name: 'New User', avatar_url: null, role: 'member', is_owner: false })
})

t.test('register validation: 400 with specific codes, 409 for a taken e-mail, nothing stored', async (t) => {
  const { app, api } = await build(t)
  await seedWorkspace(app)
  const before = await rowCounts(app)
  const cases: [Record<string, unknown>, number, string][] = [
    [{ email: 'x@example.com', password: 'short', display_name: 'X' }, 400, 'WEAK_PASSWORD'],
    [{ email: 'x@example.com', password: 'é'.repeat(37), display_name: 'X' }, 400, 'VALIDATION_ERROR'],
    [{ email: 'not-an-email', password: PASSWORD, display_name: 'X' }, 400, 'INVALID_EMAIL'],
    [{ email: 'x@example.com', password: PASSWORD }, 400, 'VALIDATION_ERROR'],
    [{ email: 'x@example.com', password: PASSWORD, display_name: '' }, 400, 'VALIDATION_ERROR'],
    [{ email: 'x@example.com', password: PASSWORD, display_name: '   ' }, 400, 'VALIDATION_ERROR'],
    [{ email: 'x@example.com', password: PASSWORD, display_name: 'X', role: 'admin' }, 400, 'VALIDATION_ERROR'],
    [{ email: 'MEMBER@example.com', password: PASSWORD, display_name: 'X' }, 409, 'EMAIL_TAKEN'],
  ]
  for (const [payload, status, code] of cases) {
    const res = await api({ method: 'POST', url: '/api/v1/auth/register', payload })
    t.equal(res.statusCode, status, JSON.stringify(payload))
    t.equal(res.json().code, code, res.json().error)
  }
  t.same(await rowCounts(app), before)
})

t.test('two concurrent registrations of one e-mail: one 201, one 409', async (t) => {
  const { app, api } = await build(t)
  await seedWorkspace(app)
  const payload = { email: 'race@example.com', password: PASSWORD, display_name: 'R' }
  const results = await Promise.all([1, 2].map(() => api({ method: 'POST', url: '/api/v1/auth/register', payload })))
  t.same(results.map((r) => r.statusCode).sort(), [201, 409])
  t.equal(await app.db.prisma.user.count({ where: { email: 'race@example.com' } }), 1)
})

t.test('login failures are indistinguishable: unknown e-mail, wrong password, invited user', async (t) => {
  const { app, api } = await build(t)
  const ws = await seedWorkspace(app)
  await app.db.pool.query("INSERT INTO users (id, email, display_name, status) VALUES ('0190a000-0000-7000-8000-000000000009', 'invited@example.com', 'I', 'invited')")
  const attempts = [
    { email: 'nobody@example.com', password: FIXTURE_PASSWORD },
    { email: ws.member.email, password: 'wrong password!!' },
    { email: 'invited@example.com', password: FIXTURE_PASSWORD },
  ]
  const bodies = []
  for (const payload of attempts) {
    const res = await api({ method: 'POST', url: '/api/v1/auth/login', payload })
    t.equal(res.statusCode, 401)
    bodies.push(res.body)
  }
  t.same(new Set(bodies).size, 1, 'same body for every failure')
  t.same(JSON.parse(bodies[0]!), { error: 'invalid e-mail or password', code: 'UNAUTHORIZED' })

  const ok = await api({ method: 'POST', url: '/api/v1/auth/login', payload: { email: ws.owner.email, password: FIXTURE_PASSWORD } })
  t.equal(ok.statusCode, 200)
  t.equal(ok.json().is_owner, true)
  t.equal(ok.json().role, 'admin')

  const bad = await api({ method: 'POST', url: '/api/v1/auth/login', payload: { email: ws.owner.email } })
  t.equal(bad.statusCode, 400)
  t.equal(bad.json().code, 'VALIDATION_ERROR')
})

function sign(header: object, payload: object, secret: string): string {
  const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url')
  const head = `${enc(header)}.${enc(payload)}`
  return `${head}.${createHmac('sha256', secret).update(head).digest('base64url')}`
}

t.test('JWTs: alg none, expired, malformed, foreign secret, unknown user, tampered → 401', async (t) => {
  const { app, api } = await build(t)
  const ws = await seedWorkspace(app)
  const now = Math.floor(Date.now() / 1000)
  const base = { sub: ws.owner.id, typ: 'human', iss: 'agent-messaging-service', iat: now }
  const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url')
  const valid = ws.owner.token
  const [h, p] = valid.split('.')
  const tokens: Record<string, string> = {
    'alg none': `${enc({ alg: 'none', typ: 'JWT' })}.${enc({ ...base, exp: now + 3600 })}.`,
    'alg none with signature': `${enc({ alg: 'none', typ: 'JWT' })}.${enc({ ...base, exp: now + 3600 })}.${valid.split('.')[2]}`,
    expired: sign({ alg: 'HS256', typ: 'JWT' }, { ...base, iat: now - 90_000, exp: now - 3600 }, TEST_JWT_SECRET),
    'foreign secret': sign({ alg: 'HS256', typ: 'JWT' }, { ...base, exp: now + 3600 }, 'some-other-secret-that-is-long-enough-000'),
    'wrong issuer': sign({ alg: 'HS256', typ: 'JWT' }, { ...base, iss: 'someone-else', exp: now + 3600 }, TEST_JWT_SECRET),
    'unknown user': sign({ alg: 'HS256', typ: 'JWT' }, { ...base, sub: '0190a000-0000-7000-8000-00000000dead', exp: now + 3600 }, TEST_JWT_SECRET),
    'tampered payload': `${h}.${enc({ ...base, sub: ws.member.id, exp: now + 3600 })}.${valid.split('.')[2]}`,
    malformed: 'not.a.jwt',
    'two parts': `${h}.${p}`,
    garbage: 'garbage',
    'unknown api key': `svc_${Buffer.alloc(32, 1).toString('base64')}`,
  }
  for (const [name, token] of Object.entries(tokens)) {
    const res = await api({ method: 'GET', url: '/api/v1/auth/me', headers: bearer(token) })
    t.equal(res.statusCode, 401, name)
    t.equal(res.json().code, 'UNAUTHORIZED', name)
  }
  for (const headers of [{}, { authorization: 'Basic abc' }, { authorization: 'Bearer' }, { authorization: `Token ${valid}` }]) {
    const res = await api({ method: 'GET', url: '/api/v1/auth/me', headers })
    t.equal(res.statusCode, 401, JSON.stringify(headers))
  }
  t.equal((await api({ method: 'GET', url: '/api/v1/auth/me', headers: bearer(valid) })).statusCode, 200, 'the real token works')
  const self = sign({ alg: 'HS256', typ: 'JWT' }, { ...base, exp: now + 3600 }, TEST_JWT_SECRET)
  t.equal((await api({ method: 'GET', url: '/api/v1/auth/me', headers: bearer(self) })).statusCode, 200, 'a correctly signed token works')
})

t.test('GET /auth/me describes an agent key too', async (t) => {
  const { app, api } = await build(t)
  const ws = await seedWorkspace(app)
  const res = await api({ method: 'GET', url: '/api/v1/auth/me', headers: bearer(ws.primary.key) })
  t.same(res.json(), { type: 'AGENT', id: ws.primary.id, name: 'primary-agent', display_name: 'primary-agent', key_id: ws.primary.keyId })
})

t.test('GET /users lists the active people with their roles, for any member or agent', async (t) => {
  const { app, api } = await build(t)
  const ws = await seedWorkspace(app)
  // someone invited (not accepted) and a registration awaiting approval are not listed
  await api({ method: 'POST', url: '/api/v1/invites', payload: { email: 'invited@example.com' }, headers: bearer(ws.owner.token) })
  const pending = await api({ method: 'POST', url: '/api/v1/auth/register', payload: { email: 'waiting@example.com', password: PASSWORD, display_name: 'Waiting' } })
  t.equal(pending.statusCode, 201)

  for (const token of [ws.owner.token, ws.member.token, ws.observer.token, ws.primary.key]) {
    const res = await api({ method: 'GET', url: '/api/v1/users', headers: bearer(token) })
    t.equal(res.statusCode, 200, res.body)
    const people = res.json<{ id: string; email: string; display_name: string; role: string; is_owner: boolean; created_at: string }[]>()
    t.same(
      people.map((p) => [p.display_name, p.email, p.role, p.is_owner]),
      [
        ['member', 'member@example.com', 'member', false],
        ['observer', 'observer@example.com', 'observer', false],
        ['owner', 'owner@example.com', 'admin', true],
      ],
      'by display name, with roles',
    )
    t.same(Object.keys(people[0]!).sort(), ['avatar_url', 'created_at', 'display_name', 'email', 'id', 'is_owner', 'role'])
    t.equal(people.find((p) => p.is_owner)!.id, ws.owner.id)
    t.notMatch(res.body, /password|\$2b\$/, 'no password hashes')
  }

  // approved, the registration is listed
  await api({ method: 'POST', url: `/api/v1/registrations/${pending.json().id}/approve`, headers: bearer(ws.owner.token) })
  const after = await api({ method: 'GET', url: '/api/v1/users', headers: bearer(ws.member.token) })
  t.ok(after.json().some((p: { email: string }) => p.email === 'waiting@example.com'))

  t.equal((await api({ method: 'GET', url: '/api/v1/users' })).statusCode, 401)
})
