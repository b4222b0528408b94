// Issue 29, item 3: every 401 of the service carries `WWW-Authenticate: Bearer` (RFC 6750), with
// `error="invalid_token"` exactly when a credential was sent, and points at the protected resource
// metadata (RFC 9728), which says the resource takes bearer API keys and JWTs and names no
// authorization server.
import t from 'tap'
import { bearer, build, FIXTURE_PASSWORD, seedWorkspace } from '../support/index.ts'

const PUBLIC_URL = 'https://chat.example.com'
const CHALLENGE = `Bearer realm="agent-messaging-service", resource_metadata="${PUBLIC_URL}/.well-known/oauth-protected-resource"`
const INVALID = `${CHALLENGE}, error="invalid_token"`

t.test('Bearer challenges and resource metadata', async (t) => {
  const { app, api } = await build(t, { env: { PUBLIC_URL } })
  const ws = await seedWorkspace(app)
  const expired = app.jwt.sign({ sub: ws.owner.id, typ: 'human' }, { expiresIn: -10 })

  await t.test('REST 401s: no credential, a bad one, an expired JWT, the wrong kind of key', async (t) => {
    const cases: [string, string, string, Record<string, string>, string][] = [
      ['no credential', 'GET', '/api/v1/channels', {}, CHALLENGE],
      ['a Basic credential is not a bearer one', 'GET', '/api/v1/channels', { authorization: 'Basic b3duZXI6cGFzcw==' }, CHALLENGE],
      ['an unknown API key', 'GET', '/api/v1/channels', bearer('svc_not-a-real-key'), INVALID],
      ['a malformed token', 'GET', '/api/v1/auth/me', bearer('not.a.jwt'), INVALID],
      ['an expired JWT', 'GET', '/api/v1/auth/me', bearer(expired), INVALID],
      ['an integration-style key on an agent route', 'POST', '/api/v1/channels', bearer('svc_int_bogus'), INVALID],
      ['an owner route without credential', 'GET', '/api/v1/invites', {}, CHALLENGE],
    ]
    for (const [what, method, url, headers, challenge] of cases) {
      const res = await api({ method: method, url, headers: { ...headers, 'content-type': 'application/json' }, payload: method === 'POST' ? '{}' : undefined })
      t.equal(res.statusCode, 401, what)
      t.equal(res.json().code, 'UNAUTHORIZED', what)
      t.equal(res.headers['www-authenticate'], challenge, what)
    }
  })

  await t.test('a wrong password at login is a 401 with a challenge too (no bearer credential sent)', async (t) => {
    const res = await api({
      method: 'POST',
      url: '/api/v1/auth/login',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ email: ws.owner.email, password: 'not the password at all' }),
    })
    t.equal(res.statusCode, 401)
    t.equal(res.headers['www-authenticate'], CHALLENGE)
    const good = await api({
      method: 'POST',
      url: '/api/v1/auth/login',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ email: ws.owner.email, password: FIXTURE_PASSWORD }),
    })
    t.equal(good.statusCode, 200)
    t.equal(good.headers['www-authenticate'], undefined, 'no challenge on success')
  })

  await t.test('other answers carry no challenge: 403, 404, 200', async (t) => {
    const forbidden = await api({ method: 'GET', url: '/api/v1/invites', headers: bearer(ws.member.token) })
    t.equal(forbidden.statusCode, 403)
    t.equal(forbidden.headers['www-authenticate'], undefined)
    const ok = await api({ method: 'GET', url: '/api/v1/channels', headers: bearer(ws.primary.key) })
    t.equal(ok.statusCode, 200)
    t.equal(ok.headers['www-authenticate'], undefined)
    const missing = await app.inject({ method: 'GET', url: '/api/v1/nothing-here' })
    t.equal(missing.statusCode, 404)
    t.equal(missing.headers['www-authenticate'], undefined)
  })

  await t.test('the WebSocket upgrade: a bad ?token= is a credential sent', async (t) => {
    const upgrade = { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==' }
    const bad = await app.inject({ method: 'GET', url: '/ws?token=svc_not-a-real-key', headers: upgrade })
    t.equal(bad.statusCode, 401)
    t.equal(bad.headers['www-authenticate'], INVALID)
    const none = await app.inject({ method: 'GET', url: '/ws', headers: upgrade })
    t.equal(none.statusCode, 401)
    t.equal(none.headers['www-authenticate'], CHALLENGE)
  })

  await t.test('GET /.well-known/oauth-protected-resource: RFC 9728 metadata without an authorization server', async (t) => {
    for (const [url, resource] of [
      ['/.well-known/oauth-protected-resource', PUBLIC_URL],
      ['/.well-known/oauth-protected-resource/mcp', `${PUBLIC_URL}/mcp`],
    ] as const) {
      const res = await app.inject({ method: 'GET', url })
      t.equal(res.statusCode, 200, url)
      t.match(res.headers['content-type'], /^application\/json/)
      const body = res.json()
      t.same(Object.keys(body).sort(), ['bearer_credentials', 'bearer_methods_supported', 'resource', 'resource_documentation', 'resource_name'])
      t.equal(body.resource, resource)
      t.same(body.bearer_methods_supported, ['header'])
      t.equal(body.authorization_servers, undefined, 'no authorization server')
      t.equal(body.resource_documentation, `${PUBLIC_URL}/docs`)
      t.match(body.bearer_credentials, /API key \(svc_….*JWT from POST \/api\/v1\/auth\/login/)
    }
  })
})
