// MCP tests drive /mcp with the SDK's own client over real HTTP (the app listens on port 0).
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import type { FastifyInstance } from 'fastify'
import type { AddressInfo } from 'node:net'
import type { Test } from 'tap'
import { build, type BuildTestOptions, type TestApp } from '../helper.ts'
import { bearer, seedWorkspace, type Workspace } from '../support/index.ts'

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

/** An SDK client connected with `token`, closed with the test. */
export async function connectClient(t: Test, base: string, token: string, name = 'tap-test'): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(mcpUrl(base), { requestInit: { headers: bearer(token) } })
  const client = new Client({ name, version: '1.0.0' })
  await client.connect(transport)
  t.teardown(() => client.close().catch(() => {}))
  return { client, transport }
}

/** Calls a tool; returns its result as the SDK parsed it. */
export async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult
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

export const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }

/** A POST to /mcp with plain fetch (no SDK), for what happens before any MCP exchange. */
export async function rawPost(base: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(mcpUrl(base), { method: 'POST', headers: { ...MCP_HEADERS, ...headers }, body: JSON.stringify(body) })
}

export type { FastifyInstance }
