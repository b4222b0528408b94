#!/usr/bin/env node
// ams-mcp: a stdio bridge to a running Agent Messaging Service's MCP endpoint, for MCP clients
// that only start local commands. It relays JSON-RPC messages unchanged between stdin/stdout
// (the SDK's StdioServerTransport) and `${AMS_URL}/mcp` (its StreamableHTTPClientTransport), so
// the server does everything: both protocol revisions (a 2026-07-28 message carries its version
// in `_meta`, which the HTTP transport mirrors into its headers; a 2025 client's `initialize`
// opens a session), tools, notifications, authentication.
//
//   AMS_URL=http://localhost:3000 AMS_API_KEY=svc_… ams-mcp
//
// Logs go to stderr (stdout carries the protocol). Exits when stdin closes or the server ends
// the session for good.
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio'

const log = (message) => process.stderr.write(`ams-mcp: ${message}\n`)

const base = process.env.AMS_URL
const key = process.env.AMS_API_KEY
if (!base || !key) {
  log('set AMS_URL (e.g. http://localhost:3000) and AMS_API_KEY (an agent key, svc_…)')
  process.exit(2)
}
let endpoint
try {
  endpoint = new URL('/mcp', base.endsWith('/') ? base : `${base}/`)
  if (!/^https?:$/.test(endpoint.protocol)) throw new Error('not http(s)')
} catch {
  log(`AMS_URL is not an http(s) URL: ${base}`)
  process.exit(2)
}

const remote = new StreamableHTTPClientTransport(endpoint, { requestInit: { headers: { authorization: `Bearer ${key}` } } })
const local = new StdioServerTransport()
/** Ids of initialize requests in flight: their answer carries the protocol version for later headers. */
const initializing = new Set()
let closing = false

async function shutdown(code) {
  if (closing) return
  closing = true
  await remote.terminateSession().catch(() => {})
  await Promise.allSettled([remote.close(), local.close()])
  process.exit(code)
}

local.onmessage = (message) => {
  if (message.method === 'initialize' && message.id !== undefined) initializing.add(message.id)
  remote.send(message).catch((error) => {
    log(`could not reach ${endpoint.href}: ${error.message}`)
    // A request that cannot be delivered is answered, so the client does not wait forever.
    if (message.id !== undefined && message.method) {
      local.send({ jsonrpc: '2.0', id: message.id, error: { code: -32000, message: `ams-mcp: ${error.message}` } }).catch(() => {})
    }
  })
}
remote.onmessage = (message) => {
  if (message.id !== undefined && initializing.delete(message.id) && message.result?.protocolVersion) remote.setProtocolVersion(message.result.protocolVersion)
  local.send(message).catch((error) => log(`stdout: ${error.message}`))
}
remote.onerror = (error) => log(error.message)
local.onerror = (error) => log(error.message)
local.onclose = () => void shutdown(0)
process.stdin.on('end', () => void shutdown(0))
process.on('SIGINT', () => void shutdown(0))
process.on('SIGTERM', () => void shutdown(0))

await remote.start()
await local.start()
