// Issue 14, item 13: unauthenticated requests have their own rate budget per client address, so
// anonymous traffic cannot exhaust the workspace's budget; the owner's PATCH /api/v1/workspace is
// never limited.
import t from 'tap'
import { build } from '../helper.ts'
import { openWs } from '../realtime/helpers.ts'
import { bearer, seedWorkspace } from '../support/index.ts'

for (const redis of [false, true]) {
  t.test(`anonymous traffic does not lock out the workspace or its owner (${redis ? 'Redis' : 'memory'})`, async (t) => {
    const { app, api } = await build(t, { redis, env: { RATE_LIMIT_PER_MINUTE: '40' } })
    const ws = await seedWorkspace(app)
    const stranger = '203.0.113.7'
    const codes: number[] = []
    for (let i = 0; i < 45; i++) codes.push((await app.inject({ method: 'GET', url: '/api/v1/no-such-path', remoteAddress: stranger })).statusCode)
    t.same(codes.slice(0, 40), Array(40).fill(404))
    t.same(codes.slice(40), Array(5).fill(429), 'the stranger is limited')
    const limited = await app.inject({ method: 'GET', url: '/api/v1/agents', remoteAddress: stranger, headers: bearer('svc_not-a-real-key') })
    t.equal(limited.statusCode, 429, 'a wrong credential counts as anonymous')
    t.same(Object.keys(limited.json()).sort(), ['code', 'error'])
    t.ok(Number(limited.headers['retry-after']) >= 1)

    t.equal((await api({ method: 'GET', url: '/api/v1/agents', headers: bearer(ws.primary.key), remoteAddress: stranger })).statusCode, 200, 'an agent (even from that address) is not affected')
    t.equal((await app.inject({ method: 'GET', url: '/api/v1/no-such-path', remoteAddress: '203.0.113.8' })).statusCode, 404, 'another address has its own budget')

    // exhaust the workspace's own budget: the owner can still change the limit
    const workspaceCodes: number[] = []
    for (let i = 0; i < 40; i++) workspaceCodes.push((await api({ method: 'GET', url: '/api/v1/agents', headers: bearer(ws.agents[0]!.key) })).statusCode)
    t.equal(workspaceCodes.at(-1), 429, 'the workspace budget is used up')
    t.equal((await api({ method: 'GET', url: '/api/v1/workspace', headers: bearer(ws.owner.token) })).statusCode, 429, "the owner's other requests count")
    const patch = await api({ method: 'PATCH', url: '/api/v1/workspace', headers: bearer(ws.owner.token), payload: { rate_limit_per_minute: 1000 } })
    t.equal(patch.statusCode, 200, "the owner's PATCH /workspace is never limited")
    t.equal((await api({ method: 'GET', url: '/api/v1/agents', headers: bearer(ws.primary.key) })).statusCode, 200, 'the new limit applies at once')
    // another human's PATCH is still refused (403) and counted, not exempt
    t.equal((await api({ method: 'PATCH', url: '/api/v1/workspace', headers: bearer(ws.member.token), payload: { rate_limit_per_minute: 1 } })).statusCode, 403)
  })
}

// Issue 14, item 12: self-registration modes. By default (`approval`) a self-registered account
// can log in and read GET /auth/me, nothing else (REST or WebSocket), until the owner approves it.
t.test('registration modes: approval (default), open, closed; the owner lists, approves and refuses', async (t) => {
  const { app, api } = await build(t)
  const ws = await seedWorkspace(app)
  const password = 'a-long-enough-password'
  const register = (email: string) => api({ method: 'POST', url: '/api/v1/auth/register', payload: { email, password, display_name: email.split('@')[0] } })
  const loginAs = async (email: string) => (await api({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password } })).json().token as string

  const workspace = await api({ method: 'GET', url: '/api/v1/workspace', headers: bearer(ws.owner.token) })
  t.equal(workspace.json().registration_mode, 'approval', 'the default')

  const reg = await register('stranger@example.com')
  t.equal(reg.statusCode, 201)
  t.same(Object.keys(reg.json()).sort(), ['created_at', 'display_name', 'email', 'id', 'role'], "the spec's answer, unchanged")
  const token = await loginAs('stranger@example.com')
  t.ok(token, 'a pending account can log in')
  const me = await api({ method: 'GET', url: '/api/v1/auth/me', headers: bearer(token) })
  t.equal(me.statusCode, 200)
  t.equal(me.json().id, reg.json().id)
  const primaryDm = await api({ method: 'POST', url: '/api/v1/dm', headers: bearer(token), payload: { participant_id: ws.primary.id } })
  for (const [what, res] of [
    ['list agents', await api({ method: 'GET', url: '/api/v1/agents', headers: bearer(token) })],
    ['open a DM with the primary agent', primaryDm],
    ['list channels', await api({ method: 'GET', url: '/api/v1/channels', headers: bearer(token) })],
    ['read the workspace', await api({ method: 'GET', url: '/api/v1/workspace', headers: bearer(token) })],
  ] as const) {
    t.equal(res.statusCode, 403, what)
    t.same(res.json(), { error: res.json().error, code: 'APPROVAL_PENDING' }, what)
  }
  t.equal(await app.db.prisma.channel.count({ where: { type: 'dm' } }), 0, 'no DM was opened')
  await app.listen({ port: 0, host: '127.0.0.1' })
  const port = (app.server.address() as { port: number }).port
  const socket = await openWs(`ws://127.0.0.1:${port}/ws?token=${token}`)
  t.match(await socket.closed, { code: 4403, reason: /^APPROVAL_PENDING/ }, 'no WebSocket either: closed at once with 4403')
  t.same(socket.frames, [])

  // the owner sees and approves it; others may not
  t.equal((await api({ method: 'GET', url: '/api/v1/registrations', headers: bearer(ws.member.token) })).statusCode, 403)
  t.equal((await api({ method: 'GET', url: '/api/v1/registrations', headers: bearer(ws.primary.key) })).statusCode, 403)
  t.equal((await api({ method: 'GET', url: '/api/v1/registrations' })).statusCode, 401)
  const list = await api({ method: 'GET', url: '/api/v1/registrations', headers: bearer(ws.owner.token) })
  t.same(list.json(), { registrations: [reg.json()] })
  t.equal((await api({ method: 'POST', url: `/api/v1/registrations/${ws.member.id}/approve`, headers: bearer(ws.owner.token) })).statusCode, 404, 'an ordinary account is not a registration')
  t.equal((await api({ method: 'POST', url: `/api/v1/registrations/${reg.json().id}/approve`, headers: bearer(ws.member.token) })).statusCode, 403)
  const approved = await api({ method: 'POST', url: `/api/v1/registrations/${reg.json().id}/approve`, headers: bearer(ws.owner.token) })
  t.equal(approved.statusCode, 200)
  t.same(approved.json(), reg.json())
  t.equal((await api({ method: 'GET', url: '/api/v1/agents', headers: bearer(token) })).statusCode, 200, 'approved: an ordinary member, same token')
  t.same((await api({ method: 'GET', url: '/api/v1/registrations', headers: bearer(ws.owner.token) })).json(), { registrations: [] })

  // refusing deletes the account
  const second = (await register('second@example.com')).json()
  t.equal((await api({ method: 'DELETE', url: `/api/v1/registrations/${second.id}`, headers: bearer(ws.owner.token) })).statusCode, 204)
  t.equal(await app.db.prisma.user.count({ where: { email: 'second@example.com' } }), 0)
  t.equal((await api({ method: 'DELETE', url: `/api/v1/registrations/${second.id}`, headers: bearer(ws.owner.token) })).statusCode, 404)

  // open: active at once
  t.equal((await api({ method: 'PATCH', url: '/api/v1/workspace', headers: bearer(ws.owner.token), payload: { registration_mode: 'open' } })).json().registration_mode, 'open')
  t.equal((await register('open@example.com')).statusCode, 201)
  t.equal((await api({ method: 'GET', url: '/api/v1/agents', headers: bearer(await loginAs('open@example.com')) })).statusCode, 200)

  // closed: refused, nothing stored
  t.equal((await api({ method: 'PATCH', url: '/api/v1/workspace', headers: bearer(ws.owner.token), payload: { registration_mode: 'closed' } })).statusCode, 200)
  const closed = await register('closed@example.com')
  t.equal(closed.statusCode, 403)
  t.same(closed.json(), { error: closed.json().error, code: 'REGISTRATION_CLOSED' })
  t.equal(await app.db.prisma.user.count({ where: { email: 'closed@example.com' } }), 0)
  for (const payload of [{ registration_mode: 'anyone' }, { registration_mode: null }, {}]) {
    t.equal((await api({ method: 'PATCH', url: '/api/v1/workspace', headers: bearer(ws.owner.token), payload })).statusCode, 400, JSON.stringify(payload))
  }
  t.equal((await api({ method: 'PATCH', url: '/api/v1/workspace', headers: bearer(ws.member.token), payload: { registration_mode: 'open' } })).statusCode, 403)
})
