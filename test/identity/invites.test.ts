import t, { type Test } from 'tap'
import { sha256Hex } from '../../src/lib/tokens.ts'
import { build, type BuildTestOptions } from '../helper.ts'
import { bootstrapBody, INVITE_RE, JWT_RE, OWNER_PASSWORD, rowCounts } from './fixtures/support.ts'
import { bearer, seedWorkspace } from '../support/index.ts'

const PASSWORD = 'invitee-password-1'

async function bootstrapped(t: Test, options: BuildTestOptions = {}) {
  const ctx = await build(t, options)
  const res = await ctx.api({ method: 'POST', url: '/api/v1/bootstrap', payload: bootstrapBody() })
  return { ...ctx, result: res.json() }
}

const q = (token: string) => `/api/v1/invite?token=${encodeURIComponent(token)}`

t.test('GET /invite shows who the invite is for; no credential needed', async (t) => {
  const { api, result } = await bootstrapped(t)
  const bob = result.humans[1]
  const res = await api({ method: 'GET', url: q(bob.invite_token) })
  t.equal(res.statusCode, 200)
  t.same(res.json(), { email: 'bob@example.com', display_name: 'bob', role: 'observer', expires_at: bob.expires_at })
  // the token pasted into a URL without encoding ('+' arrives as a space) still works
  const raw = await api({ method: 'GET', url: `/api/v1/invite?token=${bob.invite_token}` })
  t.equal(raw.statusCode, 200)
  // the front-end URL carries the token percent-encoded, so a URL parser reads back exactly the
  // token that was returned
  t.ok(bob.invite_url.endsWith(`/invite?token=${encodeURIComponent(bob.invite_token)}`))
  t.notMatch(bob.invite_url.split('?token=')[1], /[+/=]/)
  const fromUrl = new URL(bob.invite_url).searchParams.get('token')!
  t.equal(fromUrl, bob.invite_token)
  const parsed = await api({ method: 'GET', url: q(fromUrl) })
  t.equal(parsed.statusCode, 200)
})

t.test('GET /invite: unknown, malformed or missing token → 400', async (t) => {
  const { api } = await bootstrapped(t)
  for (const [url, code] of [
    [q(`inv_${Buffer.alloc(32).toString('base64')}`), 'INVITE_INVALID'],
    [q('svc_not-an-invite'), 'INVITE_INVALID'],
    [q('x'), 'INVITE_INVALID'],
    ['/api/v1/invite', 'VALIDATION_ERROR'],
    ['/api/v1/invite?token=', 'VALIDATION_ERROR'],
  ] as const) {
    const res = await api({ method: 'GET', url })
    t.equal(res.statusCode, 400, url)
    t.equal(res.json().code, code, url)
  }
})

t.test('accepting an invite sets the password, activates the user, logs in, and works once', async (t) => {
  const { app, api, result } = await bootstrapped(t, { realPasswordCost: true })
  const alice = result.humans[0]
  const res = await api({
    method: 'POST',
    url: '/api/v1/invite/accept',
    payload: { token: alice.invite_token, email: 'ALICE@example.com', password: PASSWORD, display_name: 'Alice A.' },
  })
  t.equal(res.statusCode, 200, res.body)
  const session = res.json()
  t.match(session.token, JWT_RE)
  t.equal(session.user_id, alice.user_id)
  t.equal(session.email, 'alice@example.com')
  t.equal(session.display_name, 'Alice A.')
  t.equal(session.role, 'member')
  t.equal(session.is_owner, false)
  const me = await api({ method: 'GET', url: '/api/v1/auth/me', headers: bearer(session.token) })
  t.equal(me.statusCode, 200, 'logged in automatically')
  t.equal(me.json().id, alice.user_id)

  const user = await app.db.prisma.user.findUniqueOrThrow({ where: { id: alice.user_id } })
  t.equal(user.status, 'active')
  t.match(user.passwordHash, /^\$2[aby]\$12\$/)
  const invite = await app.db.prisma.invite.findUniqueOrThrow({ where: { tokenHash: sha256Hex(alice.invite_token) } })
  t.ok(invite.consumedAt, 'consumed')

  const login = await api({ method: 'POST', url: '/api/v1/auth/login', payload: { email: 'alice@example.com', password: PASSWORD } })
  t.equal(login.statusCode, 200)

  for (const call of [
    { method: 'POST' as const, url: '/api/v1/invite/accept', payload: { token: alice.invite_token, password: 'another-password-2' } },
    { method: 'GET' as const, url: q(alice.invite_token) },
  ]) {
    const again = await api(call)
    t.equal(again.statusCode, 400)
    t.equal(again.json().code, 'INVITE_USED')
  }
  const relogin = await api({ method: 'POST', url: '/api/v1/auth/login', payload: { email: 'alice@example.com', password: 'another-password-2' } })
  t.equal(relogin.statusCode, 401, 'the second accept did not change the password')
})

t.test('accept without e-mail and display name keeps the invited values', async (t) => {
  const { api, result } = await bootstrapped(t)
  const bob = result.humans[1]
  const res = await api({ method: 'POST', url: '/api/v1/invite/accept', payload: { token: bob.invite_token, password: PASSWORD } })
  t.equal(res.statusCode, 200)
  t.equal(res.json().display_name, 'bob')
  t.equal(res.json().role, 'observer')
})

t.test('accept failures: 400 with specific codes, the invite stays usable and nothing changes', async (t) => {
  const { app, api, result } = await bootstrapped(t)
  const carol = result.humans[2]
  const before = await rowCounts(app)
  const cases: [Record<string, unknown>, string][] = [
    [{ token: carol.invite_token, password: 'short' }, 'WEAK_PASSWORD'],
    [{ token: carol.invite_token, password: 'é'.repeat(40) }, 'VALIDATION_ERROR'],
    [{ token: carol.invite_token }, 'VALIDATION_ERROR'],
    [{ token: carol.invite_token, password: PASSWORD, email: 'mallory@example.com' }, 'INVITE_EMAIL_MISMATCH'],
    [{ token: carol.invite_token, password: PASSWORD, display_name: '' }, 'VALIDATION_ERROR'],
    [{ token: carol.invite_token, password: PASSWORD, extra: 1 }, 'VALIDATION_ERROR'],
    [{ token: `inv_${Buffer.alloc(32, 7).toString('base64')}`, password: PASSWORD }, 'INVITE_INVALID'],
    [{ password: PASSWORD }, 'VALIDATION_ERROR'],
  ]
  for (const [payload, code] of cases) {
    const res = await api({ method: 'POST', url: '/api/v1/invite/accept', payload })
    t.equal(res.statusCode, 400, JSON.stringify(payload))
    t.equal(res.json().code, code, res.json().error)
  }
  t.same(await rowCounts(app), before)
  const user = await app.db.prisma.user.findUniqueOrThrow({ where: { id: carol.user_id } })
  t.equal(user.status, 'invited')
  t.equal(user.passwordHash, null)
  const ok = await api({ method: 'POST', url: '/api/v1/invite/accept', payload: { token: carol.invite_token, password: PASSWORD, email: 'carol@example.com' } })
  t.equal(ok.statusCode, 200, 'still usable after the failures')
})

t.test('an invite expires after 7 days', async (t) => {
  const { app, api, result } = await bootstrapped(t)
  const alice = result.humans[0]
  const invite = await app.db.prisma.invite.findUniqueOrThrow({ where: { tokenHash: sha256Hex(alice.invite_token) } })
  t.equal(invite.expiresAt.getTime() - invite.createdAt.getTime(), 7 * 24 * 3600 * 1000)
  // age the invite by 7 days and a second
  await app.db.pool.query("UPDATE invites SET created_at = created_at - interval '7 days 1 second', expires_at = expires_at - interval '7 days 1 second' WHERE id = $1", [invite.id])
  for (const call of [
    { method: 'GET' as const, url: q(alice.invite_token) },
    { method: 'POST' as const, url: '/api/v1/invite/accept', payload: { token: alice.invite_token, password: PASSWORD } },
  ]) {
    const res = await api(call)
    t.equal(res.statusCode, 400)
    t.equal(res.json().code, 'INVITE_EXPIRED')
  }
  t.equal((await app.db.prisma.user.findUniqueOrThrow({ where: { id: alice.user_id } })).status, 'invited')
})

t.test('two concurrent accepts of one invite: exactly one succeeds', async (t) => {
  const { app, api, result } = await bootstrapped(t)
  const alice = result.humans[0]
  const results = await Promise.all(
    ['first-password-111', 'second-password-222'].map((password) => api({ method: 'POST', url: '/api/v1/invite/accept', payload: { token: alice.invite_token, password } })),
  )
  t.same(results.map((r) => r.statusCode).sort(), [200, 400])
  const loser = results.find((r) => r.statusCode === 400)!
  t.equal(loser.json().code, 'INVITE_USED')
  const winner = results.findIndex((r) => r.statusCode === 200)
  const password = ['first-password-111', 'second-password-222'][winner]!
  const login = await api({ method: 'POST', url: '/api/v1/auth/login', payload: { email: 'alice@example.com', password } })
  t.equal(login.statusCode, 200, "the winner's password is the one stored")
  t.equal(await app.db.prisma.invite.count({ where: { consumedAt: { not: null } } }), 1)
})

t.test('POST /invites: the owner invites a human; others are refused', async (t) => {
  const { app, api, config } = await build(t)
  const ws = await seedWorkspace(app)
  const payload = { email: 'Dave@Example.com', display_name: 'Dave', role: 'observer' }

  t.equal((await api({ method: 'POST', url: '/api/v1/invites', payload })).statusCode, 401)
  for (const token of [ws.member.token, ws.primary.key]) {
    const res = await api({ method: 'POST', url: '/api/v1/invites', payload, headers: bearer(token) })
    t.equal(res.statusCode, 403)
    t.equal(res.json().code, 'FORBIDDEN')
  }
  t.equal(await app.db.prisma.user.count({ where: { email: 'dave@example.com' } }), 0)

  const res = await api({ method: 'POST', url: '/api/v1/invites', payload, headers: bearer(ws.owner.token) })
  t.equal(res.statusCode, 201, res.body)
  const created = res.json()
  t.equal(created.email, 'dave@example.com')
  t.equal(created.display_name, 'Dave')
  t.equal(created.role, 'observer')
  t.match(created.invite_token, INVITE_RE)
  t.equal(created.invite_url, `${config.frontendUrl}/invite?token=${encodeURIComponent(created.invite_token)}`)

  // inviting again before acceptance replaces the token
  const again = await api({ method: 'POST', url: '/api/v1/invites', payload: { email: 'dave@example.com' }, headers: bearer(ws.owner.token) })
  t.equal(again.statusCode, 201)
  t.equal(again.json().user_id, created.user_id)
  t.equal(again.json().display_name, 'Dave', 'keeps the name')
  t.equal(again.json().role, 'member', 'role as given (default member)')
  t.equal((await api({ method: 'GET', url: q(created.invite_token) })).json().code, 'INVITE_INVALID', 'old token no longer valid')
  const accept = await api({ method: 'POST', url: '/api/v1/invite/accept', payload: { token: again.json().invite_token, password: PASSWORD } })
  t.equal(accept.statusCode, 200)

  // e-mails with an active account, and bad input
  for (const [body, status, code] of [
    [{ email: 'dave@example.com' }, 409, 'EMAIL_TAKEN'],
    [{ email: ws.member.email }, 409, 'EMAIL_TAKEN'],
    [{ email: 'nope' }, 400, 'INVALID_EMAIL'],
    [{ email: 'x@example.com', role: 'admin' }, 400, 'INVALID_ROLE'],
    [{ email: 'x@example.com', extra: true }, 400, 'VALIDATION_ERROR'],
  ] as const) {
    const r = await api({ method: 'POST', url: '/api/v1/invites', payload: body, headers: bearer(ws.owner.token) })
    t.equal(r.statusCode, status, JSON.stringify(body))
    t.equal(r.json().code, code)
  }
  t.equal(await app.db.prisma.user.count({ where: { email: 'x@example.com' } }), 0)
})

t.test('GET /invites: the owner sees who has not accepted yet, expired ones flagged; others are refused', async (t) => {
  const { app, api, result } = await bootstrapped(t)
  const owner = await api({ method: 'POST', url: '/api/v1/auth/login', payload: { email: 'owner@example.com', password: OWNER_PASSWORD } })
  t.equal(owner.statusCode, 200, owner.body)
  const ownerToken = owner.json().token
  const [alice, bob, carol] = result.humans

  const list = async () => {
    const res = await api({ method: 'GET', url: '/api/v1/invites', headers: bearer(ownerToken) })
    t.equal(res.statusCode, 200, res.body)
    return res.json<{ user_id: string; email: string; display_name: string; role: string; created_at: string; expires_at: string; expired: boolean }[]>()
  }
  const first = await list()
  t.same(first.map((i) => i.email).sort(), ['alice@example.com', 'bob@example.com', 'carol@example.com'])
  const bobItem = first.find((i) => i.user_id === bob.user_id)!
  t.same(Object.keys(bobItem).sort(), ['created_at', 'display_name', 'email', 'expired', 'expires_at', 'role', 'user_id'])
  t.equal(bobItem.role, 'observer')
  t.equal(bobItem.display_name, 'bob')
  t.equal(bobItem.expires_at, bob.expires_at)
  t.equal(bobItem.expired, false)
  t.notMatch(JSON.stringify(first), /inv_/, 'tokens are never listed')

  // Alice accepts: she leaves the list. Carol's invite expires: it stays, flagged.
  await api({ method: 'POST', url: '/api/v1/invite/accept', payload: { token: alice.invite_token, password: PASSWORD } })
  await app.db.pool.query("UPDATE invites SET expires_at = now() - interval '1 second' WHERE user_id = $1", [carol.user_id])
  const second = await list()
  t.same(second.map((i) => i.email).sort(), ['bob@example.com', 'carol@example.com'])
  t.equal(second.find((i) => i.user_id === carol.user_id)!.expired, true)

  // Inviting Carol again (the "resend") replaces her invite: still one item, no longer expired,
  // newest first.
  const again = await api({ method: 'POST', url: '/api/v1/invites', payload: { email: 'carol@example.com', role: 'observer' }, headers: bearer(ownerToken) })
  t.equal(again.statusCode, 201)
  const third = await list()
  t.equal(third.length, 2)
  t.equal(third[0]!.user_id, carol.user_id)
  t.equal(third[0]!.expired, false)
  t.equal(third[0]!.role, 'observer')
  t.equal(third[0]!.expires_at, again.json().expires_at)

  // no credential, a member, an agent
  t.equal((await api({ method: 'GET', url: '/api/v1/invites' })).statusCode, 401)
  const aliceSession = await api({ method: 'POST', url: '/api/v1/auth/login', payload: { email: 'alice@example.com', password: PASSWORD } })
  for (const token of [aliceSession.json().token, result.primary_agent.api_key]) {
    const res = await api({ method: 'GET', url: '/api/v1/invites', headers: bearer(token) })
    t.equal(res.statusCode, 403)
    t.equal(res.json().code, 'FORBIDDEN')
  }
})
