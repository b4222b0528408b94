// /mcp on the wire, by plain fetch: what each protocol revision answers, and the JSON-RPC errors a
// client gets for what it got wrong (malformed JSON -32700, no method -32600, unknown method
// -32601, invalid params -32602, an unsupported revision -32022, headers that disagree with the
// body -32020), the cache fields of 2026-07-28 results, and the Origin policy.
import t from 'tap'
import { loadConfig } from '../../src/config.ts'
import { bearer } from '../support/index.ts'
import { ENVELOPE, INITIALIZE, MCP_HEADERS, mcpUrl, MODERN_VERSION, modernPost, rawPost, setup } from './helpers.ts'

interface RpcAnswer {
  jsonrpc: '2.0'
  id: string | number | null
  result?: Record<string, unknown>
  error?: { code: number; message: string; data?: unknown }
}

const SERVER_INFO = { name: 'agent-messaging-service', title: 'Agent Messaging Service', version: '1.0.0' }

t.test('/mcp protocol answers', async (t) => {
  const ctx = await setup(t)
  const auth = bearer(ctx.ws.agents[0]!.key)
  const rpc = async (res: Response): Promise<RpcAnswer> => (await res.json()) as RpcAnswer

  await t.test('2026-07-28: server/discover, resultType and cache fields on every result', async (t) => {
    const discover = await modernPost(ctx.base, 1, 'server/discover', {}, auth)
    t.equal(discover.status, 200)
    t.match(discover.headers.get('content-type'), 'application/json')
    const body = await rpc(discover)
    t.same(body.result, {
      supportedVersions: [MODERN_VERSION],
      capabilities: { tools: {}, resources: { subscribe: true }, prompts: {} },
      instructions: String(body.result?.instructions),
      resultType: 'complete',
      ttlMs: 300_000,
      cacheScope: 'public',
      _meta: { 'io.modelcontextprotocol/serverInfo': SERVER_INFO },
    })
    t.match(body.result?.instructions, 'wait_for_events')

    const cached: [string, Record<string, unknown>, number, string][] = [
      ['tools/list', {}, 300_000, 'public'],
      ['prompts/list', {}, 300_000, 'public'],
      ['resources/templates/list', {}, 300_000, 'public'],
      ['resources/list', {}, 0, 'private'],
    ]
    for (const [method, params, ttlMs, cacheScope] of cached) {
      const res = await rpc(await modernPost(ctx.base, 2, method, params, auth))
      t.match(res.result, { resultType: 'complete', ttlMs, cacheScope }, method)
    }
    const called = await rpc(await modernPost(ctx.base, 3, 'tools/call', { name: 'whoami', arguments: {} }, auth))
    t.match(called.result, { resultType: 'complete', isError: undefined, structuredContent: { type: 'AGENT' } })
    t.notOk('ttlMs' in called.result!, 'a tool result is not cacheable')
  })

  await t.test('2026-07-28: no session, and the 2025 session methods are not methods', async (t) => {
    const res = await modernPost(ctx.base, 1, 'tools/list', {}, auth)
    t.equal(res.headers.get('mcp-session-id'), null)
    await res.text()
    const subscribe = await modernPost(ctx.base, 2, 'resources/subscribe', { uri: 'ams://channels/x' }, auth)
    t.equal(subscribe.status, 404)
    t.equal((await rpc(subscribe)).error?.code, -32601)
    const get = await fetch(mcpUrl(ctx.base), { headers: { ...auth, accept: 'text/event-stream', 'mcp-protocol-version': MODERN_VERSION } })
    t.equal(get.status, 400, 'GET is a 2025 session stream: without a session it is refused')
    t.equal((await rpc(get)).error?.code, -32000)
  })

  await t.test('JSON-RPC errors: parse error, invalid request, unknown method, invalid params', async (t) => {
    for (const headers of [{}, { 'mcp-protocol-version': MODERN_VERSION }] as Record<string, string>[]) {
      const malformed = await rawPost(ctx.base, '{"jsonrpc": "2.0", "id": 1, "method": ', { ...auth, ...headers })
      t.equal(malformed.status, 400)
      t.match(malformed.headers.get('content-type'), 'application/json')
      t.same(await rpc(malformed), { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: Invalid JSON' } })
    }
    const noMethod = await rawPost(ctx.base, { jsonrpc: '2.0', id: 7 }, auth)
    t.equal(noMethod.status, 400)
    t.equal((await rpc(noMethod)).error?.code, -32600)

    const unknown = await modernPost(ctx.base, 8, 'channels/explode', {}, auth)
    t.equal(unknown.status, 404)
    t.same(await rpc(unknown), { jsonrpc: '2.0', id: 8, error: { code: -32601, message: 'Method not found' } })

    const noName = await rpc(await modernPost(ctx.base, 9, 'tools/call', { arguments: {} }, auth))
    t.equal(noName.id, 9)
    t.equal(noName.error?.code, -32602)
    t.notMatch(noName.error?.message, /\bat \w+ \(|node_modules|\.ts:/, 'no stack or source paths')
    const unknownTool = await rpc(await modernPost(ctx.base, 10, 'tools/call', { name: 'launch_rockets', arguments: {} }, auth))
    t.same(unknownTool.error, { code: -32602, message: "unknown tool 'launch_rockets' (tools/list shows the tools)" })

    // Bad tool arguments are the tool's own error result, which a model can read and correct.
    const badArgs = await rpc(await modernPost(ctx.base, 11, 'tools/call', { name: 'read_messages', arguments: { limit: 'ten' } }, auth))
    t.match(badArgs.result, { isError: true, structuredContent: { code: 'VALIDATION_ERROR', error: "missing argument 'channel'" } })

    const unstorable = await modernPost(ctx.base, 12, 'tools/call', { name: 'post_message', arguments: { channel: 'general', text: 'nul \u0000 byte' } }, auth)
    t.equal(unstorable.status, 400)
    t.match(await rpc(unstorable), { id: 12, error: { code: -32602, data: { code: 'VALIDATION_ERROR' } } })

    const notJson = await fetch(mcpUrl(ctx.base), { method: 'POST', headers: { ...auth, accept: MCP_HEADERS.accept, 'content-type': 'text/plain' }, body: 'hello' })
    t.equal(notJson.status, 415)
    t.equal((await rpc(notJson)).error?.code, -32000)
  })

  await t.test('2025-11-25 session: unknown method and invalid params are JSON-RPC errors too', async (t) => {
    const init = await rawPost(ctx.base, { ...INITIALIZE, params: { ...INITIALIZE.params, protocolVersion: '2025-11-25' } }, auth)
    t.equal(init.status, 200)
    await init.text()
    const session = { ...auth, 'mcp-session-id': init.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-11-25' }
    // A session answers requests on an SSE stream: one `data:` line holds the JSON-RPC answer.
    const answer = async (res: Response): Promise<RpcAnswer> => JSON.parse(/^data: (.+)$/m.exec(await res.text())![1]!) as RpcAnswer
    t.same((await answer(await rawPost(ctx.base, { jsonrpc: '2.0', id: 2, method: 'channels/explode' }, session))).error, { code: -32601, message: 'Method not found' })
    const noName = await answer(await rawPost(ctx.base, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: {} }, session))
    t.equal(noName.error?.code, -32602)
    const malformed = await rawPost(ctx.base, '{"jsonrpc": "2.0", "id": 4,', session)
    t.equal(malformed.status, 400)
    t.equal((await rpc(malformed)).error?.code, -32700)
  })

  await t.test('2026-07-28 errors: an unsupported revision, headers that disagree with the body', async (t) => {
    const future = await rawPost(
      ctx.base,
      { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: { ...ENVELOPE, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } } },
      { ...auth, 'mcp-protocol-version': '2099-01-01', 'mcp-method': 'tools/list' },
    )
    t.equal(future.status, 400)
    t.match(await rpc(future), { id: 1, error: { code: -32022, data: { supported: [MODERN_VERSION], requested: '2099-01-01' } } })

    const wrongMethod = await modernPost(ctx.base, 2, 'tools/list', {}, { ...auth, 'mcp-method': 'prompts/list' })
    t.equal(wrongMethod.status, 400)
    t.equal((await rpc(wrongMethod)).error?.code, -32020)
    const wrongName = await modernPost(ctx.base, 3, 'tools/call', { name: 'whoami', arguments: {} }, { ...auth, 'mcp-name': 'post_message' })
    t.equal(wrongName.status, 400)
    t.equal((await rpc(wrongName)).error?.code, -32020)
    const noVersionHeader = await rawPost(ctx.base, { jsonrpc: '2.0', id: 4, method: 'tools/list', params: { _meta: ENVELOPE } }, { ...auth, 'mcp-method': 'tools/list' })
    t.equal(noVersionHeader.status, 400)
    t.equal((await rpc(noVersionHeader)).error?.code, -32020)
  })

  await t.test('Origin: a browser page of another site is refused; no Origin, or our own, is served', async (t) => {
    const evil = await rawPost(ctx.base, INITIALIZE, { ...auth, origin: 'http://evil.example' })
    t.equal(evil.status, 403)
    t.same(await rpc(evil), { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Invalid Origin: evil.example' } })
    const evilModern = await modernPost(ctx.base, 1, 'server/discover', {}, { ...auth, origin: 'https://evil.example:3000' })
    t.equal(evilModern.status, 403)
    const evilGet = await fetch(mcpUrl(ctx.base), { headers: { ...auth, accept: 'text/event-stream', origin: 'http://evil.example' } })
    t.equal(evilGet.status, 403)
    t.equal((await fetch(mcpUrl(ctx.base), { method: 'POST', headers: { ...MCP_HEADERS, ...auth, origin: 'null' }, body: JSON.stringify(INITIALIZE) })).status, 403, 'an opaque origin')

    // The test server's PUBLIC_URL is http://localhost:3000.
    const own = await modernPost(ctx.base, 2, 'server/discover', {}, { ...auth, origin: 'http://localhost:3000' })
    t.equal(own.status, 200)
    await own.text()
    const none = await modernPost(ctx.base, 3, 'server/discover', {}, auth)
    t.equal(none.status, 200)
    await none.text()
  })
})

t.test('MCP_ALLOWED_ORIGINS: host names or origins; by default the hosts of PUBLIC_URL and FRONTEND_URL', async (t) => {
  t.same(loadConfig({}).mcpAllowedOrigins, ['localhost'])
  t.same(loadConfig({ PUBLIC_URL: 'https://api.example.com', FRONTEND_URL: 'https://app.example.com/' }).mcpAllowedOrigins, ['api.example.com', 'app.example.com'])
  t.same(loadConfig({ MCP_ALLOWED_ORIGINS: 'https://app.example.com, Tools.Example.org,,moz-extension://*' }).mcpAllowedOrigins, ['app.example.com', 'tools.example.org', 'moz-extension://*'])
  t.same(loadConfig({ MCP_ALLOWED_ORIGINS: '*' }).mcpAllowedOrigins, ['*'])
  t.throws(() => loadConfig({ MCP_ALLOWED_ORIGINS: 'https://' }), /MCP_ALLOWED_ORIGINS/)
})
