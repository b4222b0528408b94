// PATCH /api/v1/auth/me: a human changes their display name, avatar and password; a password
// change ends the other sessions; the change reaches other clients as a `user_updated` frame.
// Bootstrap names the owner after themselves, and humans have presence like agents.
import t from 'tap'
import { uuidv7 } from '../../src/lib/ids.ts'
import { connect, listen, refusedUpgrade, wsUrl } from '../realtime/helpers.ts'
import { addMember, bearer, build, createChannel, FIXTURE_PASSWORD, seedWorkspace, UUID_RE } from '../support/index.ts'
import { bootstrapBody } from './fixtures/support.ts'

const NEW_PASSWORD = 'a brand new passphrase'

t.test('PATCH /auth/me changes the display name and avatar; GET /auth/me, /users and /directory show them', async (t) => {
  const { app, api } = await build(t)
  const ws = await seedWorkspace(app)
  const res = await api({ method: 'PATCH', url: '/api/v1/auth/me', headers: bearer(ws.member.token), payload: { display_name: '  Mia Member ', avatar_url: 'https://img.example.com/mia.png' } })
  t.equal(res.statusCode, 200, res.body)
  const expected = { type: 'HUMAN', id: ws.member.id, email: 'member@example.com', display_name: 'Mia Member', avatar_url: 'https://img.example.com/mia.png', role: 'member', is_owner: false }
  t.same(res.json(), expected, 'the caller as GET /auth/me shows it, no session without a password change')
  t.same((await api({ method: 'GET', url: '/api/v1/auth/me', headers: bearer(ws.member.token) })).json(), expected)
  const people = (await api({ method: 'GET', url: '/api/v1/users', headers: bearer(ws.owner.token) })).json()
  t.match(
    people.find((p: { id: string }) => p.id === ws.member.id),
    { display_name: 'Mia Member', avatar_url: 'https://img.example.com/mia.png' },
  )
  const directory = (await api({ method: 'GET', url: '/api/v1/directory', headers: bearer(ws.primary.key) })).json()
  t.match(
    directory.find((e: { id: string }) => e.id === ws.member.id),
    { name: 'Mia Member', avatar_url: 'https://img.example.com/mia.png' },
  )

  const cleared = await api({ method: 'PATCH', url: '/api/v1/auth/me', headers: bearer(ws.member.token), payload: { avatar_url: null } })
  t.equal(cleared.statusCode, 200)
  t.same(cleared.json(), { ...expected, avatar_url: null }, 'null removes the picture, the name stays')
})

t.test('PATCH /auth/me: bad input is 400 and changes nothing; agents 403; no credential 401; pending accounts 403', async (t) => {
  const { app, api } = await build(t)
  const ws = await seedWorkspace(app)
  const before = await app.db.prisma.user.findUniqueOrThrow({ where: { id: ws.member.id } })
  const cases: [Record<string, unknown>, string][] = [
    [{}, 'VALIDATION_ERROR'],
    [{ display_name: '' }, 'VALIDATION_ERROR'],
    [{ display_name: '   ' }, 'VALIDATION_ERROR'],
    [{ display_name: 'x'.repeat(256) }, 'VALIDATION_ERROR'],
    [{ avatar_url: 'javascript:alert(1)' }, 'VALIDATION_ERROR'],
    [{ avatar_url: 'ftp://example.com/a.png' }, 'VALIDATION_ERROR'],
    [{ avatar_url: `https://example.com/${'a'.repeat(2048)}` }, 'VALIDATION_ERROR'],
    [{ email: 'other@example.com' }, 'VALIDATION_ERROR'],
    [{ role: 'admin' }, 'VALIDATION_ERROR'],
    [{ new_password: NEW_PASSWORD }, 'VALIDATION_ERROR'],
    [{ current_password: FIXTURE_PASSWORD }, 'VALIDATION_ERROR'],
    [{ current_password: FIXTURE_PASSWORD, new_password: 'short' }, 'WEAK_PASSWORD'],
    [{ current_password: FIXTURE_PASSWORD, new_password: 'é'.repeat(37) }, 'VALIDATION_ERROR'],
    [{ display_name: 'Changed', current_password: 'not the password', new_password: NEW_PASSWORD }, 'WRONG_PASSWORD'],
  ]
  for (const [payload, code] of cases) {
    const res = await api({ method: 'PATCH', url: '/api/v1/auth/me', headers: bearer(ws.member.token), payload })
    t.equal(res.statusCode, 400, JSON.stringify(payload))
    t.equal(res.json().code, code, res.json().error)
  }
  t.same(await app.db.prisma.user.findUniqueOrThrow({ where: { id: ws.member.id } }), before, 'nothing changed')

  const agent = await api({ method: 'PATCH', url: '/api/v1/auth/me', headers: bearer(ws.primary.key), payload: { display_name: 'x' } })
  t.same([agent.statusCode, agent.json().code], [403, 'FORBIDDEN'])
  const none = await api({ method: 'PATCH', url: '/api/v1/auth/me', payload: { display_name: 'x' } })
  t.same([none.statusCode, none.json().code], [401, 'UNAUTHORIZED'])

  const pending = await app.db.prisma.user.create({ data: { id: uuidv7(), email: 'pending@example.com', displayName: 'Pending', role: 'member', awaitingApproval: true } })
  const token = app.signUserToken(pending.id)
  const refused = await api({ method: 'PATCH', url: '/api/v1/auth/me', headers: bearer(token), payload: { display_name: 'Renamed' } })
  t.same([refused.statusCode, refused.json().code], [403, 'APPROVAL_PENDING'], 'only GET /auth/me is open to an account awaiting approval')
  t.equal((await api({ method: 'GET', url: '/api/v1/auth/me', headers: bearer(token) })).statusCode, 200)
  t.equal((await app.db.prisma.user.findUniqueOrThrow({ where: { id: pending.id } })).displayName, 'Pending')
})

t.test('a password change takes the current password, ends every older session and hands back a new one', async (t) => {
  const { app, api } = await build(t, { realPasswordCost: true, env: { WS_AUTH_RECHECK_MS: '100' } })
  const ws = await seedWorkspace(app)
  await listen(app)
  const login = async (password: string) => api({ method: 'POST', url: '/api/v1/auth/login', payload: { email: 'member@example.com', password } })
  const otherDevice = (await login(FIXTURE_PASSWORD)).json().token as string
  const { client: otherSocket } = await connect(app, otherDevice)

  const res = await api({ method: 'PATCH', url: '/api/v1/auth/me', headers: bearer(ws.member.token), payload: { current_password: FIXTURE_PASSWORD, new_password: NEW_PASSWORD } })
  t.equal(res.statusCode, 200, res.body)
  const body = res.json()
  t.same(Object.keys(body).sort(), ['avatar_url', 'display_name', 'email', 'id', 'is_owner', 'role', 'session', 'type'])
  t.same(Object.keys(body.session).sort(), ['expires_at', 'token'])
  const claims = app.jwt.decode<{ sub: string; ver: number; exp: number }>(body.session.token)!
  t.equal(claims.sub, ws.member.id)
  t.equal(claims.ver, 1)
  t.equal(new Date(claims.exp * 1000).toISOString(), body.session.expires_at)
  const stored = await app.db.prisma.user.findUniqueOrThrow({ where: { id: ws.member.id } })
  t.match(stored.passwordHash, /^\$2[aby]\$12\$/, 'bcrypt cost 12')

  for (const old of [ws.member.token, otherDevice]) {
    const me = await api({ method: 'GET', url: '/api/v1/auth/me', headers: bearer(old) })
    t.same([me.statusCode, me.json().code], [401, 'UNAUTHORIZED'], 'a session from before the change has ended')
  }
  const me = await api({ method: 'GET', url: '/api/v1/auth/me', headers: bearer(body.session.token) })
  t.equal(me.statusCode, 200, 'the new token works')
  t.match(me.json(), { id: ws.member.id })

  t.equal((await login(FIXTURE_PASSWORD)).statusCode, 401, 'the old password no longer logs in')
  const fresh = await login(NEW_PASSWORD)
  t.equal(fresh.statusCode, 200, 'the new one does')
  t.equal((await api({ method: 'GET', url: '/api/v1/auth/me', headers: bearer(fresh.json().token) })).statusCode, 200)

  // The other device's socket is closed by the periodic credential check.
  const closed = await otherSocket.closed
  t.equal(closed.code, 4401, "the other device's socket closes: do not reconnect with that token")
  const upgrade = await refusedUpgrade(wsUrl(app, { token: ws.member.token }))
  t.equal(upgrade.status, 401, 'an old token cannot open a socket')
})

t.test('wrong current passwords count towards the login limit: 429 after enough, with Retry-After', async (t) => {
  const { app, api } = await build(t, { env: { LOGIN_FAILURES_PER_ACCOUNT: '3' } })
  const ws = await seedWorkspace(app)
  const attempt = () => api({ method: 'PATCH', url: '/api/v1/auth/me', headers: bearer(ws.member.token), payload: { current_password: 'guess guess guess', new_password: NEW_PASSWORD } })
  for (let i = 0; i < 3; i++) t.equal((await attempt()).json().code, 'WRONG_PASSWORD')
  const limited = await attempt()
  t.same([limited.statusCode, limited.json().code], [429, 'RATE_LIMITED'])
  t.ok(Number(limited.headers['retry-after']) > 0)
})

t.test('a new name or avatar reaches every connected client as a user_updated frame', async (t) => {
  const { app, api } = await build(t)
  const ws = await seedWorkspace(app)
  await listen(app)
  // The agent shares no channel with the member: the people list is the workspace's.
  const { client: agent } = await connect(app, ws.primary.key)
  const { client: self } = await connect(app, ws.member.token)
  t.teardown(async () => {
    await agent.close()
    await self.close()
  })
  const res = await api({ method: 'PATCH', url: '/api/v1/auth/me', headers: bearer(ws.member.token), payload: { display_name: 'Mia', avatar_url: 'https://img.example.com/m.png' } })
  t.equal(res.statusCode, 200)
  const frame = { type: 'user_updated', user_id: ws.member.id, display_name: 'Mia', avatar_url: 'https://img.example.com/m.png' }
  t.same(await agent.type('user_updated'), frame)
  t.same(await self.type('user_updated'), frame, "the user's own other tabs update too")
  const events = (await api({ method: 'GET', url: '/api/v1/events', headers: bearer(ws.owner.token) })).json()
  t.same(
    events.events.filter((e: { type: string }) => e.type === 'user_updated'),
    [],
    'not part of the event log',
  )
})

t.test('humans have presence: co-members get a presence frame, the directory shows online and last_seen_at', async (t) => {
  const { app, api } = await build(t)
  const ws = await seedWorkspace(app)
  await listen(app)
  const ch = await createChannel(api, ws.agents[0]!.key, 'room')
  await addMember(api, ws.agents[0]!.key, ch.id, ws.member.id)
  const { client: agent } = await connect(app, ws.agents[0]!.key)
  t.teardown(() => agent.close().then(() => {}))
  const { client: human } = await connect(app, ws.member.token)
  const up = await agent.type('presence', (f) => f.member_id === ws.member.id)
  t.same(Object.keys(up).sort(), ['last_seen_at', 'member_id', 'member_type', 'online', 'type'], 'no agent_id for a human')
  t.match(up, { member_type: 'HUMAN', online: true })
  const entry = (await api({ method: 'GET', url: '/api/v1/directory', headers: bearer(ws.owner.token) })).json().find((e: { id: string }) => e.id === ws.member.id)
  t.match(entry, { online: true, last_seen_at: up.last_seen_at })
  await human.close()
  const down = await agent.type('presence', (f) => f.member_id === ws.member.id && f.online === false)
  const after = (await api({ method: 'GET', url: '/api/v1/directory', headers: bearer(ws.owner.token) })).json().find((e: { id: string }) => e.id === ws.member.id)
  t.match(after, { online: false, last_seen_at: down.last_seen_at })
})

t.test('bootstrap: the owner gets their own display name (or the e-mail local part), not the primary agent name', async (t) => {
  const { api } = await build(t)
  const body = bootstrapBody()
  ;(body.primary_agent as Record<string, unknown>).display_name = ' Olivia Owner '
  const res = await api({ method: 'POST', url: '/api/v1/bootstrap', payload: body })
  t.equal(res.statusCode, 201, res.body)
  const p = res.json().primary_agent
  t.equal(p.owner_display_name, 'Olivia Owner')
  t.equal(p.display_name, 'Primary Bot')
  const me = (await api({ method: 'GET', url: '/api/v1/auth/me', headers: bearer(p.jwt_token) })).json()
  t.match(me, { id: p.user_id, display_name: 'Olivia Owner' })
  t.match(p.user_id, UUID_RE)
})
