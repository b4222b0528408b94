// MCP tests drive /mcp with the official SDK's client over real HTTP (the app listens on port 0),
// in either protocol revision: 'legacy' is the 2025-11-25 initialize handshake with a session,
// 'modern' pins 2026-07-28 (no session, `_meta` on every request). Every tool result they see is
// checked against the tool's advertised output schema.
import { Client, StreamableHTTPClientTransport, type CallToolResult, type jsonSchemaValidator, type JsonSchemaValidator, type Tool } from '@modelcontextprotocol/client'
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/client/validators/ajv'
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import type { FastifyInstance } from 'fastify'
import type { AddressInfo } from 'node:net'
import rootTap, { type Test } from 'tap'
import { build, type BuildTestOptions, type TestApp } from '../helper.ts'
import { REQUIRE_ALL } from '../setup/services.ts'
import { bearer, seedWorkspace, type Workspace } from '../support/index.ts'

export type Era = 'legacy' | 'modern'
export const ERAS: Era[] = ['legacy', 'modern']
export const MODERN_VERSION = '2026-07-28'
export const LEGACY_VERSION = '2025-11-25'

export interface McpCtx extends TestApp {
  ws: Workspace
  base: string
}

export async function setup(t: Test, options: BuildTestOptions & { agents?: number } = {}): Promise<McpCtx> {
  const ctx = await build(t, options)
  const ws = await seedWorkspace(ctx.app, options.agents)
  await ctx.app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = ctx.app.server.address() as AddressInfo
  return { ...ctx, ws, base: `http://127.0.0.1:${port}` }
}

export function mcpUrl(base: string): URL {
  return new URL('/mcp', base)
}

/** Compiled JSON Schemas by their text, for the whole test process (see sdkValidator). */
function byText<V>(compile: (schema: object) => V): (schema: object) => V {
  const compiled = new Map<string, V>()
  return (schema) => {
    const text = JSON.stringify(schema)
    let found = compiled.get(text)
    if (found === undefined) compiled.set(text, (found = compile(schema)))
    return found
  }
}

/**
 * The SDK's own validator (its default), with what it compiles kept across clients: every client
 * compiles the output schemas of the tools it lists, and the tests make hundreds of clients of the
 * same server (a tenth of the MCP groups' CPU).
 */
const sdkAjv = new AjvJsonSchemaValidator()
type SdkSchema = Parameters<jsonSchemaValidator['getValidator']>[0]
class CachedValidators implements jsonSchemaValidator {
  private readonly compile = byText((schema) => sdkAjv.getValidator(schema as SdkSchema))
  getValidator<T>(schema: SdkSchema): JsonSchemaValidator<T> {
    return this.compile(schema) as JsonSchemaValidator<T>
  }
}
const sdkValidator = new CachedValidators()

/** A client of the SDK in the given protocol era. */
export function newClient(era: Era, name = 'tap-test'): Client {
  return new Client({ name, version: '1.0.0' }, { jsonSchemaValidator: sdkValidator, ...(era === 'modern' ? { versionNegotiation: { mode: { pin: MODERN_VERSION } } } : {}) })
}

/** An SDK client connected with `token`, closed with the test. */
export async function connectClient(t: Test, base: string, token: string, era: Era = 'legacy'): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(mcpUrl(base), { requestInit: { headers: bearer(token) } })
  const client = newClient(era)
  await client.connect(transport)
  t.teardown(() => client.close().catch(() => {}))
  return { client, transport }
}

const ajv = new Ajv2020({ strict: false, allErrors: true })
addFormats.default(ajv)
const compileOutputSchema = byText((schema) => ajv.compile(schema))
const outputChecks = new WeakMap<Client, Promise<Map<string, Tool>>>()

/** Calls a tool; returns its result, after checking its structuredContent against the tool's output schema. */
export async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  let tools = outputChecks.get(client)
  if (!tools) outputChecks.set(client, (tools = client.listTools().then((list) => new Map(list.tools.map((tool) => [tool.name, tool])))))
  const schema = (await tools).get(name)?.outputSchema
  const result = await client.callTool({ name, arguments: args })
  if (!schema) throw new Error(`tool ${name} has no output schema`)
  const validate = compileOutputSchema(schema)
  if (!validate(result.structuredContent)) throw new Error(`${name}: structuredContent does not match its output schema: ${ajv.errorsText(validate.errors)}`)
  return result
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tool results are compared field by field
export const structured = (result: CallToolResult): Record<string, any> => result.structuredContent as Record<string, any>

export const textOf = (result: CallToolResult): string => result.content.map((c) => (c.type === 'text' ? c.text : '')).join('')

export const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw-http', version: '1.0.0' } },
}

/** The `_meta` envelope a 2026-07-28 request carries. */
export const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
  'io.modelcontextprotocol/clientInfo': { name: 'raw-http', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': {},
}

export const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }

/** A POST to /mcp with plain fetch (no SDK), for what happens before any MCP exchange. */
export async function rawPost(base: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(mcpUrl(base), { method: 'POST', headers: { ...MCP_HEADERS, ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) })
}

/** A 2026-07-28 request by plain fetch: the envelope in `_meta` and the standard headers. */
export async function modernPost(base: string, id: number, method: string, params: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Response> {
  const name = typeof params.name === 'string' ? params.name : typeof params.uri === 'string' ? params.uri : undefined
  return rawPost(
    base,
    { jsonrpc: '2.0', id, method, params: { ...params, _meta: ENVELOPE } },
    { 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': method, ...(name ? { 'mcp-name': name } : {}), ...headers },
  )
}

export type { FastifyInstance }

/**
 * A test of an outside client (the Python SDK, the Inspector, the conformance suite). Its probe
 * starts when the file is imported and is awaited only by the test: on a fresh machine the first
 * download takes minutes, and the other tests of the group run meanwhile instead of waiting for
 * it. Where the tool is missing the test is skipped and says why, or fails under
 * AMS_TEST_REQUIRE_ALL=1 (CI).
 */
export function testWithTool(name: string, what: string, missing: Promise<string | null>, fn: (t: Test) => Promise<void>): void {
  rootTap.test(name, async (t) => {
    const why = await missing
    if (why !== null) {
      if (REQUIRE_ALL) throw new Error(`${what} is required (AMS_TEST_REQUIRE_ALL) but ${why}`)
      await t.test(what, { skip: why }, () => {})
      return
    }
    await fn(t)
  })
}
