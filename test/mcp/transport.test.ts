// The /mcp endpoint itself: credentials checked before any MCP exchange (401 {error, code} with a
// Bearer challenge), a 2025-era session bound to its caller, a revoked key cut off on its next
// call and during a long wait (in both protocol revisions), per-caller session limits and idle
// expiry.
import t from 'tap'
import { eventually } from '../webhooks/helpers.ts'
import { call, connectClient, INITIALIZE, MCP_HEADERS, mcpUrl, modernPost, rawPost, setup, structured } from './helpers.ts'
import { bearer, createChannelId } from '../support/index.ts'

const CHALLENGE = 'Bearer realm="agent-messaging-service", resource_metadata="http://localhost:3000/.well-known/oauth-protected-resource"'

/** The HTTP status of a failed SDK call. */
const statusOf = (error: unknown): number | undefined => (error as { status?: number } | null)?.status

t.test('/mcp transport', async (t) => {
  const ctx = await setup(t, {
    agents: 6,
    env: { MCP_AUTH_RECHECK_MS: '200', MCP_SESSION_IDLE_MS: '1500', MCP_MAX_SESSIONS_PER_CALLER: '2' },
  })
  const agents = ctx.ws.agents

  await t.test('no credential, a wrong key or an integration-style key: 401 with a Bearer challenge before any MCP exchange', async (t) => {
    const cases: [Record<string, string>, string][] = [
      [{}, CHALLENGE],
      [bearer('svc_not-a-real-key'), `${CHALLENGE}, error="invalid_token"`],
      [bearer('not.a.jwt'), `${CHALLENGE}, error="invalid_token"`],
      [{ authorization: 'Basic abc' }, CHALLENGE],
    ]
    for (const [headers, challenge] of cases) {
      const res = await rawPost(ctx.base, INITIALIZE, headers)
      t.equal(res.status, 401)
      t.match(res.headers.get('content-type'), 'application/json')
      t.equal(res.headers.get('www-authenticate'), challenge)
      t.same(await res.json(), { error: 'missing or invalid credentials', code: 'UNAUTHORIZED' })
      t.equal(res.headers.get('mcp-session-id'), null)
    }
    const get = await fetch(mcpUrl(ctx.base), { headers: { accept: 'text/event-stream' } })
    t.equal(get.status, 401)
    t.equal(get.headers.get('www-authenticate'), CHALLENGE)
    t.equal(((await get.json()) as { code: string }).code, 'UNAUTHORIZED')
    t.equal(ctx.app.mcp.sessions.size, 0, 'no session was opened')
  })

  await t.test("a 2025-era request without a session must be initialize; a session is its caller's only", async (t) => {
    const list = await rawPost(ctx.base, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, bearer(agents[0]!.key))
    t.equal(list.status, 400)
    t.same(await list.json(), { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Bad Request: Server not initialized' } })

    const { transport } = await connectClient(t, ctx.base, agents[0]!.key)
    const sessionId = transport.sessionId!
    t.match(sessionId, /^[0-9a-f-]{36}$/)
    const stolen = await rawPost(ctx.base, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, { ...bearer(agents[1]!.key), 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' })
    t.equal(stolen.status, 404)
    t.match(await stolen.json(), { jsonrpc: '2.0', id: 2, error: { code: -32001, data: { code: 'NOT_FOUND' } } })
    const unknown = await rawPost(ctx.base, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, { ...bearer(agents[0]!.key), 'mcp-session-id': '00000000-0000-4000-8000-000000000000' })
    t.equal(unknown.status, 404)
  })

  await t.test('a revoked key is cut off on its next call', async (t) => {
    const agent = agents[2]!
    const { client } = await connectClient(t, ctx.base, agent.key)
    t.notOk((await call(client, 'whoami')).isError)
    const revoke = await ctx.api({ method: 'DELETE', url: `/api/v1/agents/${agent.id}/keys/${agent.keyId}`, headers: bearer(ctx.ws.owner.token) })
    t.equal(revoke.statusCode, 204)
    const error = await call(client, 'whoami').then(
      () => null,
      (e: unknown) => e,
    )
    t.ok(error, 'the call is refused')
    t.equal(statusOf(error), 401)
    // The background re-check closes the session on this instance too.
    await eventually(async () => !ctx.app.mcp.sessions.all().some((s) => s.principal.id === agent.id), 'the revoked session to close')
  })

  for (const [era, agent] of [
    ['legacy', agents[3]!],
    ['modern', agents[0]!],
  ] as const) {
    await t.test(`a revoked key also ends a wait in progress (${era})`, async (t) => {
      // A key of its own, so that the other tests' keys keep working.
      const created = await ctx.api({ method: 'POST', url: `/api/v1/agents/${agent.id}/keys`, headers: bearer(ctx.ws.owner.token), payload: { name: `wait-${era}` } })
      const { id: keyId, key } = created.json<{ id: string; key: string }>()
      const { client } = await connectClient(t, ctx.base, key, era)
      const waiting = call(client, 'wait_for_events', { timeout_seconds: 30 }).then(
        (result) => ({ result }),
        (error: unknown) => ({ error }),
      )
      await eventually(async () => ctx.app.mcp.inbox.size > 0, 'the wait to start')
      await ctx.api({ method: 'DELETE', url: `/api/v1/agents/${agent.id}/keys/${keyId}`, headers: bearer(ctx.ws.owner.token) })
      const outcome = await waiting
      // A wait that ran to its timeout would answer an ordinary (empty) result, not UNAUTHORIZED.
      if ('result' in outcome) t.equal(structured(outcome.result).code, 'UNAUTHORIZED')
      else t.ok(outcome.error, 'the wait failed')
    })
  }

  await t.test('per-caller limit: the least recently used session gives way; all busy is 429', async (t) => {
    const agent = agents[4]!
    const first = await connectClient(t, ctx.base, agent.key)
    const second = await connectClient(t, ctx.base, agent.key)
    await call(second.client, 'whoami')
    const third = await connectClient(t, ctx.base, agent.key)
    t.notOk((await call(third.client, 'whoami')).isError)
    t.notOk((await call(second.client, 'whoami')).isError)
    const evicted = await call(first.client, 'whoami').then(
      () => null,
      (e: unknown) => e,
    )
    t.equal(statusOf(evicted), 404, 'the oldest session is gone')

    // Both remaining sessions busy: a third is refused.
    const waits = [second, third].map((c) => call(c.client, 'wait_for_events', { timeout_seconds: 3 }))
    await eventually(async () => ctx.app.mcp.inbox.size >= 2, 'both waits to start')
    const refused = await rawPost(ctx.base, INITIALIZE, bearer(agent.key))
    t.equal(refused.status, 429)
    t.equal(refused.headers.get('retry-after'), '30')
    t.match(await refused.json(), { jsonrpc: '2.0', id: 1, error: { code: -32000, data: { code: 'RATE_LIMITED' } } })
    await Promise.all(waits)
  })

  await t.test('2026-07-28: subscriptions/listen streams count against the same per-caller limit', async (t) => {
    const agent = agents[1]!
    const uri = `ams://channels/${await createChannelId(ctx.api, agent.key, 'listened')}`
    const subscriptions = []
    for (let i = 0; i < 2; i++) {
      const { client } = await connectClient(t, ctx.base, agent.key, 'modern')
      subscriptions.push(await client.listen({ resourceSubscriptions: [uri] }))
    }
    t.equal(ctx.app.mcp.modern.listening, 2)
    const refused = await modernPost(ctx.base, 9, 'subscriptions/listen', { notifications: { resourceSubscriptions: [uri] } }, bearer(agent.key))
    t.equal(refused.status, 429)
    t.equal(refused.headers.get('retry-after'), '30')
    t.match(await refused.json(), { jsonrpc: '2.0', id: 9, error: { code: -32000, data: { code: 'RATE_LIMITED' } } })
    await Promise.all(subscriptions.map((s) => s.close()))
    await eventually(async () => ctx.app.mcp.modern.listening === 0, 'the streams to be released')
  })

  await t.test('an idle session expires', async (t) => {
    const agent = agents[5]!
    const init = await rawPost(ctx.base, INITIALIZE, bearer(agent.key))
    t.equal(init.status, 200)
    const sessionId = init.headers.get('mcp-session-id')!
    await init.text()
    t.ok(ctx.app.mcp.sessions.get(sessionId))
    await eventually(async () => !ctx.app.mcp.sessions.get(sessionId), 'the idle session to expire')
    const late = await fetch(mcpUrl(ctx.base), {
      method: 'POST',
      headers: { ...MCP_HEADERS, ...bearer(agent.key), 'mcp-session-id': sessionId },
      body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list' }),
    })
    t.equal(late.status, 404)
  })

  await t.test('DELETE ends a session', async (t) => {
    const { client, transport } = await connectClient(t, ctx.base, agents[0]!.key)
    const id = transport.sessionId!
    await transport.terminateSession()
    t.notOk(ctx.app.mcp.sessions.get(id))
    await client.close()
  })
})

t.test('every /mcp request counts against the workspace rate limit', async (t) => {
  const ctx = await setup(t, { env: { RATE_LIMIT_PER_MINUTE: '2' } })
  const auth = bearer(ctx.ws.agents[0]!.key)
  const init = await rawPost(ctx.base, INITIALIZE, auth)
  t.equal(init.status, 200)
  await init.text()
  const session = { ...auth, 'mcp-session-id': init.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-06-18' }
  const list = await rawPost(ctx.base, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, session)
  t.equal(list.status, 200)
  t.match(await list.text(), '"post_message"')
  const limited = await rawPost(ctx.base, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'whoami', arguments: {} } }, session)
  t.equal(limited.status, 429)
  t.ok(Number(limited.headers.get('retry-after')) > 0, 'Retry-After')
  t.equal(((await limited.json()) as { code: string }).code, 'RATE_LIMITED')
})
