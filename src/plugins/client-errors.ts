// Errors raised before a request reaches routing, answered in the same {error, code} shape as
// everything else (Fastify's own answers here are {error, message, statusCode}):
// - node's HTTP parser refusing a connection's bytes ('clientError'): headers or URL larger than
//   the header limit (431), a request that took too long to arrive (408), anything unparsable (400);
// - the router refusing a path: a malformed percent-encoding (400) or a path parameter longer
//   than Fastify's limit (414).
// Both are passed to Fastify's constructor (src/app.ts): neither goes through the error handler.
import http from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { ERROR_CODES, type ErrorCode } from '../lib/errors.ts'

function clientErrorOf(error: NodeJS.ErrnoException): { code: ErrorCode; message: string } {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return { code: 'REQUEST_TIMEOUT', message: 'the request took too long to arrive' }
  if (error.code === 'HPE_HEADER_OVERFLOW') return { code: 'HEADERS_TOO_LARGE', message: 'the request line or headers are too large' }
  return { code: 'BAD_REQUEST', message: 'the request is not valid HTTP' }
}

/** Fastify's `clientErrorHandler` option: node's HTTP parser gave up on a connection. */
export function clientErrorHandler(this: FastifyInstance, error: NodeJS.ErrnoException, socket: Socket): void {
  // A reset connection has nobody left to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  const { code, message } = clientErrorOf(error)
  const status = ERROR_CODES[code]
  const body = JSON.stringify({ error: message, code })
  this.log.debug({ err: error }, `client error: ${code}`)
  if (socket.writable) {
    socket.write(`HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`)
  }
  socket.destroy(error)
}

/** Fastify's `frameworkErrors` option: the router refused the path before any route ran. */
export function frameworkErrors(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    reply.code(414).send({ error: 'a path segment is too long', code: 'URI_TOO_LONG' })
    return
  }
  if (error.code === 'FST_ERR_BAD_URL') {
    reply.code(400).send({ error: 'the path is not a valid URL (bad percent-encoding)', code: 'BAD_REQUEST' })
    return
  }
  reply.code(500).send({ error: 'internal server error', code: 'INTERNAL_ERROR' })
}
