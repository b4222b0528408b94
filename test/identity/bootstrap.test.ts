import t from 'tap'
import { sha256Hex } from '../../src/lib/tokens.ts'
import { build } from '../helper.ts'
import { API_KEY_RE, bootstrapBody, EMPTY, INVITE_RE, JWT_RE, OWNER_PASSWORD, rowCounts } from './fixtures/support.ts'
import { bearer, UUID_RE } from '../support/index.ts'

t.test('bootstrap creates the whole workspace and answers the long and the short form', async (t) => {
  const { app, api } = await build(t, { realPasswordCost: true })
  const res = await api({ method: 'POST', url: '/api/v1/bootstrap', payload: bootstrapBody() })
  t.equal(res.statusCode, 201, res.body)
  const body = res.json()

  // long form
  const p = body.primary_agent
  t.match(p.user_id, UUID_RE)
  t.match(p.agent_id, UUID_RE)
  t.equal(p.email, 'owner@example.com', 'e-mail stored in lower case')
  t.match(p.jwt_token, JWT_RE)
  t.match(p.api_key, API_KEY_RE)
  t.equal(Buffer.from(p.api_key.slice(4), 'base64').length, 32, '32 random bytes')
  t.match(p.api_key_id, UUID_RE)
  t.equal(body.agents.length, 2)
  for (const [i, a] of body.agents.entries()) {
    t.match(a.agent_id, UUID_RE)
    t.equal(a.id, a.agent_id)
    t.equal(a.name, `helper-${i + 1}`)
    t.match(a.api_key, API_KEY_RE)
    t.match(a.api_key_id, UUID_RE)
  }
  t.equal(body.agents[0].display_name, 'Helper One')
  t.same(
    body.humans.map((h: { email: string; role: string; display_name: string }) => [h.email, h.role, h.display_name]),
    [
      ['alice@example.com', 'member', 'Alice'],
      ['bob@example.com', 'observer', 'bob'],
      ['carol@example.com', 'member', 'carol'],
    ],
  )
  for (const h of body.humans) {
    t.match(h.user_id, UUID_RE)
    t.match(h.invite_token, INVITE_RE)
    t.equal(h.invite_url, `http://app.example.test/invite?token=${encodeURIComponent(h.invite_token)}`)
    const expires = Date.parse(h.expires_at) - Date.now()
    t.ok(expires > 7 * 86_400_000 - 60_000 && expires <= 7 * 86_400_000, 'invite expires in 7 days')
  }
  t.match(body.channel.channel_id, UUID_RE)
  t.equal(body.channel.name, 'team room')
  t.equal(body.channel.topic, 'Everything')
  t.same(body.channel.members, [p.agent_id, ...body.humans.map((h: { user_id: string }) => h.user_id)], 'primary agent and the humans')
  t.match(body.instance_id, UUID_RE)

  // short form
  t.equal(p.id, p.agent_id)
  t.equal(p.name, 'primary-bot')
  t.equal(body.api_key, p.api_key)
  t.equal(body.token, p.jwt_token)
  t.equal(body.channel_id, body.channel.channel_id)
  t.equal(body.channel.id, body.channel.channel_id)
  t.equal(body.invite_url, body.humans[0].invite_url)

  // the JWT is the owner's, valid 24 h
  const claims = app.jwt.decode<{ sub: string; exp: number; iat: number }>(p.jwt_token)!
  t.equal(claims.sub, p.user_id)
  t.equal(claims.exp - claims.iat, 86_400)
  const me = await api({ method: 'GET', url: '/api/v1/auth/me', headers: bearer(p.jwt_token) })
  // The owner is named after their e-mail (no display_name given), not after the primary agent.
  t.same(me.json(), { type: 'HUMAN', id: p.user_id, email: 'owner@example.com', display_name: 'owner', avatar_url: null, role: 'admin', is_owner: true })
  t.equal(p.owner_display_name, 'owner')
  t.equal(p.display_name, 'Primary Bot', "the primary agent's own name")

  // every API key works and identifies its agent
  for (const [key, id] of [[p.api_key, p.agent_id], ...body.agents.map((a: { api_key: string; agent_id: string }) => [a.api_key, a.agent_id])]) {
    const r = await api({ method: 'GET', url: '/api/v1/agents/me', headers: bearer(key) })
    t.equal(r.statusCode, 200)
    t.equal(r.json().id, id)
  }

  // stored state
  const db = app.db.prisma
  const owner = await db.user.findUniqueOrThrow({ where: { id: p.user_id } })
  t.equal(owner.role, 'admin')
  t.equal(owner.isOwner, true)
  t.equal(owner.status, 'active')
  t.match(owner.passwordHash, /^\$2[aby]\$12\$/, 'bcrypt cost 12')
  const primary = await db.agent.findUniqueOrThrow({ where: { id: p.agent_id } })
  t.equal(primary.isPrimary, true)
  t.equal(primary.ownerId, p.user_id)
  t.same(primary.metadata, { team: 'core' })
  t.equal(primary.avatarUrl, 'https://img.example.com/p.png')
  const keys = await db.apiKey.findMany()
  t.equal(keys.length, 3)
  t.ok(
    keys.some((k) => k.keyHash === sha256Hex(p.api_key)),
    'keys stored as SHA-256',
  )
  t.notOk(JSON.stringify(keys).includes(p.api_key.slice(4)), 'no plaintext key stored')
  const invited = await db.user.findMany({ where: { status: 'invited' }, orderBy: { email: 'asc' } })
  t.same(
    invited.map((u) => [u.email, u.role, u.passwordHash]),
    [
      ['alice@example.com', 'member', null],
      ['bob@example.com', 'observer', null],
      ['carol@example.com', 'member', null],
    ],
  )
  const invites = await db.invite.findMany()
  t.equal(invites.length, 3)
  t.ok(
    invites.every((i) => body.humans.some((h: { invite_token: string }) => sha256Hex(h.invite_token) === i.tokenHash)),
    'invite tokens stored hashed',
  )
  const members = await db.channelMember.findMany({ where: { channelId: body.channel_id }, orderBy: { memberId: 'asc' } })
  t.same(members.map((m) => [m.memberId, m.memberType]).sort(), [[p.agent_id, 'AGENT'], ...body.humans.map((h: { user_id: string }) => [h.user_id, 'HUMAN'])].sort())
  const instance = await db.instance.findUniqueOrThrow({ where: { id: body.instance_id } })
  t.equal(instance.rateLimitPerMinute, null)
  const events = await db.outboxEvent.findMany({ orderBy: { id: 'asc' } })
  t.same(
    events.map((e) => e.type),
    ['channel.created', 'member.joined', 'member.joined', 'member.joined', 'member.joined'],
  )

  // the owner logs in with the bootstrap password
  const login = await api({ method: 'POST', url: '/api/v1/auth/login', payload: { email: 'OWNER@example.com', password: OWNER_PASSWORD } })
  t.equal(login.statusCode, 200)
  t.equal(login.json().user_id, p.user_id)
})

t.test('a minimal bootstrap: defaults for channel, no agents, no humans', async (t) => {
  const { api } = await build(t)
  const res = await api({
    method: 'POST',
    url: '/api/v1/bootstrap',
    payload: { primary_agent: { email: 'solo@example.com', password: 'x'.repeat(12), agent_profile: { name: 'abc', display_name: 'A' } } },
  })
  t.equal(res.statusCode, 201, res.body)
  const body = res.json()
  t.same(body.agents, [])
  t.same(body.humans, [])
  t.equal(body.channel.name, 'general')
  t.equal(body.channel.topic, null)
  t.same(body.channel.members, [body.primary_agent.agent_id])
  t.equal(body.invite_url, null)
})

t.test('a second bootstrap answers 409 ALREADY_BOOTSTRAPPED and changes nothing', async (t) => {
  const { app, api } = await build(t)
  t.equal((await api({ method: 'POST', url: '/api/v1/bootstrap', payload: bootstrapBody() })).statusCode, 201)
  const before = await rowCounts(app)
  const again = await api({ method: 'POST', url: '/api/v1/bootstrap', payload: bootstrapBody({ agents: [], humans: [] }) })
  t.equal(again.statusCode, 409)
  t.same(again.json(), { error: 'the workspace is already bootstrapped (users exist)', code: 'ALREADY_BOOTSTRAPPED' })
  t.same(await rowCounts(app), before)
})

t.test('bootstrap answers 409 when any user exists, even one not made by bootstrap', async (t) => {
  const { app, api } = await build(t)
  await app.db.pool.query("INSERT INTO users (id, email, display_name, status) VALUES ('0190a000-0000-7000-8000-000000000001', 'x@example.com', 'x', 'invited')")
  const res = await api({ method: 'POST', url: '/api/v1/bootstrap', payload: bootstrapBody() })
  t.equal(res.statusCode, 409)
  t.equal(res.json().code, 'ALREADY_BOOTSTRAPPED')
})

t.test('two concurrent bootstraps: exactly one 201, the other 409, one workspace stored', async (t) => {
  const { app, api } = await build(t)
  const results = await Promise.all([
    api({ method: 'POST', url: '/api/v1/bootstrap', payload: bootstrapBody() }),
    api({
      method: 'POST',
      url: '/api/v1/bootstrap',
      payload: bootstrapBody({ primary_agent: { email: 'other@example.com', password: OWNER_PASSWORD, agent_profile: { name: 'other-bot', display_name: 'Other' } }, agents: [], humans: [] }),
    }),
    api({
      method: 'POST',
      url: '/api/v1/bootstrap',
      payload: bootstrapBody({ primary_agent: { email: 'third@example.com', password: OWNER_PASSWORD, agent_profile: { name: 'third-bot', display_name: 'Third' } }, agents: [], humans: [] }),
    }),
  ])
  t.same(results.map((r) => r.statusCode).sort(), [201, 409, 409])
  const counts = await rowCounts(app)
  t.equal(counts.instance, 1)
  t.equal(counts.channels, 1)
  const winner = results.find((r) => r.statusCode === 201)!.json()
  t.equal(counts.users, 1 + winner.humans.length)
  t.equal(counts.agents, 1 + winner.agents.length)
})

t.test('validation failures answer 400 with a specific code and store nothing', async (t) => {
  const { app, api } = await build(t)
  const primary = (over: Record<string, unknown>) => ({ primary_agent: { ...(bootstrapBody().primary_agent as object), ...over } })
  const profile = (over: Record<string, unknown>) => primary({ agent_profile: { name: 'primary-bot', display_name: 'Primary', ...over } })
  const cases: [string, Record<string, unknown>, string][] = [
    ['password of 11 characters', primary({ password: 'x'.repeat(11) }), 'WEAK_PASSWORD'],
    ['password over 72 bytes', primary({ password: 'é'.repeat(40) }), 'VALIDATION_ERROR'],
    ['missing password', primary({ password: undefined }), 'VALIDATION_ERROR'],
    ['invalid primary e-mail', primary({ email: 'not-an-email' }), 'INVALID_EMAIL'],
    ['invalid human e-mail', { humans: [{ email: 'bob@' }] }, 'INVALID_EMAIL'],
    ['human role admin', { humans: [{ email: 'bob@example.com', role: 'admin' }] }, 'INVALID_ROLE'],
    ['human role unknown', { humans: [{ email: 'bob@example.com', role: 'boss' }] }, 'INVALID_ROLE'],
    [
      'duplicate agent names in the call',
      {
        agents: [
          { name: 'x-1', display_name: 'a' },
          { name: 'x-1', display_name: 'b' },
        ],
      },
      'DUPLICATE_NAME',
    ],
    ['agent name equal to the primary ignoring case', { agents: [{ name: 'PRIMARY-bot', display_name: 'a' }] }, 'DUPLICATE_NAME'],
    ['duplicate human e-mails ignoring case', { humans: [{ email: 'bob@example.com' }, { email: 'BOB@example.com' }] }, 'DUPLICATE_NAME'],
    ['human with the owner e-mail', { humans: [{ email: 'owner@example.com' }] }, 'DUPLICATE_NAME'],
    ['primary name too short', profile({ name: 'ab' }), 'VALIDATION_ERROR'],
    ['primary name too long', profile({ name: 'a'.repeat(101) }), 'VALIDATION_ERROR'],
    ['primary name with underscore', profile({ name: 'bad_name' }), 'VALIDATION_ERROR'],
    ['primary name with space', profile({ name: 'bad name' }), 'VALIDATION_ERROR'],
    ['missing display_name', profile({ display_name: undefined }), 'VALIDATION_ERROR'],
    ['empty display_name', profile({ display_name: '' }), 'VALIDATION_ERROR'],
    ['display_name of 256', profile({ display_name: 'd'.repeat(256) }), 'VALIDATION_ERROR'],
    ['metadata not an object', profile({ metadata: 'x' }), 'VALIDATION_ERROR'],
    ['agent without display_name', { agents: [{ name: 'helper' }] }, 'VALIDATION_ERROR'],
    ['agent bad name', { agents: [{ name: 'he', display_name: 'x' }] }, 'VALIDATION_ERROR'],
    ['channel name with punctuation', { default_channel: { name: 'general!' } }, 'VALIDATION_ERROR'],
    ['channel name empty', { default_channel: { name: '' } }, 'VALIDATION_ERROR'],
    ['channel name only spaces', { default_channel: { name: '   ' } }, 'VALIDATION_ERROR'],
    ['channel name of 101', { default_channel: { name: 'c'.repeat(101) } }, 'VALIDATION_ERROR'],
    ['unknown property', { surprise: true }, 'VALIDATION_ERROR'],
    ['missing primary_agent', { primary_agent: undefined }, 'VALIDATION_ERROR'],
  ]
  for (const [name, over, code] of cases) {
    const res = await api({ method: 'POST', url: '/api/v1/bootstrap', payload: bootstrapBody(over) })
    t.equal(res.statusCode, 400, `${name}: status`)
    t.equal(res.json().code, code, `${name}: code (${res.json().error})`)
  }
  const notJson = await api({ method: 'POST', url: '/api/v1/bootstrap', headers: { 'content-type': 'application/json' }, payload: '{"primary_agent":' })
  t.equal(notJson.statusCode, 400)
  t.equal(notJson.json().code, 'INVALID_JSON')
  t.same(await rowCounts(app), EMPTY, 'nothing stored')

  // the edge values are accepted
  const ok = await api({
    method: 'POST',
    url: '/api/v1/bootstrap',
    payload: bootstrapBody({
      primary_agent: { email: 'o@example.com', password: 'p'.repeat(12), agent_profile: { name: 'a'.repeat(100), display_name: 'd'.repeat(255) } },
      agents: [{ name: 'A-1', display_name: 'x' }],
      humans: [],
      default_channel: { name: 'c'.repeat(100) },
    }),
  })
  t.equal(ok.statusCode, 201, ok.body)
})

t.test('an agent name already stored answers 400 DUPLICATE_NAME and stores nothing', async (t) => {
  const { app, api } = await build(t)
  await app.db.pool.query("INSERT INTO agents (id, name, display_name) VALUES ('0190a000-0000-7000-8000-000000000002', 'Helper-2', 'left over')")
  const res = await api({ method: 'POST', url: '/api/v1/bootstrap', payload: bootstrapBody() })
  t.equal(res.statusCode, 400)
  t.equal(res.json().code, 'DUPLICATE_NAME')
  t.same(await rowCounts(app), { ...EMPTY, agents: 1 })
})

t.test('a failing transaction answers 500 without internals and stores nothing', async (t) => {
  const { app, api } = await build(t)
  // A real database failure in the last step of the transaction (no mocks): a trigger refuses
  // channel members.
  await app.db.pool.query(`
    CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'disk on fire'; END $$;
    CREATE TRIGGER refuse_members BEFORE INSERT ON channel_members FOR EACH ROW EXECUTE FUNCTION refuse();
  `)
  const res = await api({ method: 'POST', url: '/api/v1/bootstrap', payload: bootstrapBody() })
  t.equal(res.statusCode, 500)
  t.same(res.json(), { error: 'bootstrap failed; nothing was stored', code: 'INTERNAL_ERROR' })
  t.notOk(res.body.includes('fire'), 'no internals leak')
  t.same(await rowCounts(app), EMPTY)

  // once the fault is gone, bootstrap works
  await app.db.pool.query('DROP TRIGGER refuse_members ON channel_members')
  t.equal((await api({ method: 'POST', url: '/api/v1/bootstrap', payload: bootstrapBody() })).statusCode, 201)
})

t.test('invite URLs use the configured front-end URL', async (t) => {
  const { api } = await build(t, { env: { FRONTEND_URL: 'https://chat.example.org/' } })
  const res = await api({ method: 'POST', url: '/api/v1/bootstrap', payload: bootstrapBody() })
  const human = res.json().humans[0]
  t.equal(human.invite_url, `https://chat.example.org/invite?token=${encodeURIComponent(human.invite_token)}`)
})
