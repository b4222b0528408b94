// The seam between Fastify and the SDK's web-standard serving: a Fastify request becomes a fetch
// `Request` (the body as received, and a signal that aborts when the client goes away), and the
// SDK's `Response` is sent as is by Fastify. Refusals of our own are JSON-RPC error responses
// carrying the REST {error, code} as `data`.
import type { FastifyReply, FastifyRequest } from 'fastify'
import { clientGone } from '../lib/client-gone.ts'
import type { AppError } from '../lib/errors.ts'

/** Aborted when the client disconnects (or on purpose: a revoked credential ends a stream). */
export function requestAbort(reply: FastifyReply): AbortController {
  return clientGone(reply.request.raw, reply.raw)
}

/** Headers of the connection, not of the request: the `Request` carries its body itself. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'upgrade', 'expect'])

export function toWebRequest(request: FastifyRequest, body: string | undefined, signal: AbortSignal): Request {
  const headers = new Headers()
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined || HOP_BY_HOP.has(name)) continue
    for (const item of [value].flat()) headers.append(name, item)
  }
  const url = `${request.protocol}://${request.host}${request.url}`
  return new Request(url, { method: request.method, headers, signal, ...(request.method === 'POST' && body !== undefined ? { body } : {}) })
}

/** The JSON-RPC id of a request body, to echo in an error (null when there is none to echo). */
export function requestIdOf(body: unknown): string | number | null {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return null
  const { id, method } = body as { id?: unknown; method?: unknown }
  return typeof method === 'string' && (typeof id === 'string' || typeof id === 'number') ? id : null
}

/** An MCP-level refusal: the HTTP status of the error, a JSON-RPC error body, its headers. */
export function jsonRpcError(error: AppError, rpcCode: number, id: string | number | null): Response {
  const body = { jsonrpc: '2.0', id, error: { code: rpcCode, message: `${error.code}: ${error.message}`, data: { error: error.message, code: error.code } } }
  return Response.json(body, { status: error.statusCode, headers: error.headers })
}
