// One error handler and one not-found handler: every failure answers {error, code} with a code
// from the closed list in src/lib/errors.ts. 5xx never leak internals; they are logged with the
// request id.
import type { FastifyError, FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { AppError, type ErrorCode } from '../lib/errors.ts'
import { outageError } from '../lib/outage.ts'
import { NOT_FOUND_PAGE, wantsPage } from './web.ts'

const CODE_BY_STATUS: Record<number, ErrorCode> = {
  400: 'VALIDATION_ERROR',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  406: 'NOT_ACCEPTABLE',
  409: 'CONFLICT',
  410: 'GONE',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  422: 'UNPROCESSABLE',
  429: 'RATE_LIMITED',
  503: 'SERVICE_UNAVAILABLE',
}

interface PrismaLikeError {
  code?: string
  name?: string
}

// Body and query fields that name an existing resource (path parameters always do).
const REFERENCE_FIELDS = new Set(['/participant_id', '/user_id', '/channel_id', '/agent_id'])

function refersById(context: string | undefined, path: string | undefined): boolean {
  if (context === 'params') return true
  return (context === 'body' || context === 'querystring') && REFERENCE_FIELDS.has(path ?? '')
}

/** Maps any thrown value to an AppError (or null for an unexpected failure: a 500). */
export function toAppError(error: unknown): AppError | null {
  if (error instanceof AppError) return error
  // PostgreSQL unreachable or not answering: 503 with Retry-After on every path (src/lib/outage.ts).
  const outage = outageError(error)
  if (outage) return outage
  const e = error as FastifyError & PrismaLikeError
  if (e?.name === 'PrismaClientKnownRequestError') {
    if (e.code === 'P2002') return new AppError('CONFLICT', 'a resource with these values already exists')
    if (e.code === 'P2025') return new AppError('NOT_FOUND', 'resource not found')
    if (e.code === 'P2003') return new AppError('VALIDATION_ERROR', 'a referenced resource does not exist')
    return null
  }
  if (e?.validation) {
    const where = e.validationContext ? `${e.validationContext} ` : ''
    const first = e.validation[0]
    // Ids are opaque to clients: one that is not even a UUID names nothing, like an unknown id.
    if (first?.keyword === 'format' && (first.params as { format?: string }).format === 'uuid' && refersById(e.validationContext, first.instancePath)) {
      return new AppError('NOT_FOUND', 'resource not found')
    }
    const field = first?.instancePath ? first.instancePath.replace(/^\//, '').replaceAll('/', '.') : ''
    const detail = first?.keyword === 'additionalProperties' ? `unknown property '${(first.params as { additionalProperty?: string }).additionalProperty}'` : (first?.message ?? 'is invalid')
    return new AppError('VALIDATION_ERROR', `invalid ${where}${field ? `'${field}' ` : ''}${detail}`.replace(/\s+/g, ' ').trim())
  }
  switch (e?.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError('INVALID_JSON', e.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' ? 'request body is empty but Content-Type is application/json' : 'request body is not valid JSON')
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
    case 'FST_REQ_FILE_TOO_LARGE':
    case 'FST_FILES_LIMIT':
    case 'FST_PARTS_LIMIT':
    case 'FST_FIELDS_LIMIT':
      return new AppError('PAYLOAD_TOO_LARGE', e.code === 'FST_ERR_CTP_BODY_TOO_LARGE' ? 'request body is too large' : e.message)
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('UNSUPPORTED_MEDIA_TYPE', 'unsupported Content-Type')
  }
  if (e instanceof SyntaxError) return new AppError('INVALID_JSON', 'request body is not valid JSON')
  const status = typeof e?.statusCode === 'number' ? e.statusCode : 500
  if (status >= 400 && status < 500) {
    return new AppError(CODE_BY_STATUS[status] ?? 'VALIDATION_ERROR', e.message || 'bad request')
  }
  return null
}

async function errorsPlugin(app: FastifyInstance): Promise<void> {
  // An empty body sent with `Content-Type: application/json` (many HTTP clients add the header
  // to every request, DELETE included) means "no body", not invalid JSON. Anything else goes to
  // Fastify's own parser, with its prototype-poisoning protection.
  const parseJson = app.getDefaultJsonParser('error', 'error')
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8')
    if (text.trim() === '') return done(null, undefined)
    void parseJson(request, text, done)
  })

  // Every API route can fail unexpectedly (500), and every route that takes a body can get one
  // too large (413) or of a type it does not read (415): document it everywhere.
  app.addHook('onRoute', (route) => {
    if (!route.url.startsWith('/api/') || !route.schema || route.schema.hide) return
    const schema = route.schema as { response?: Record<string, unknown> }
    schema.response ??= {}
    const error = (description: string) => ({ description, content: { 'application/json': { schema: { $ref: 'Error#' } } } })
    const methods = [route.method].flat()
    if (methods.some((m) => m === 'POST' || m === 'PATCH' || m === 'PUT')) {
      schema.response[413] ??= error('Request body too large (`PAYLOAD_TOO_LARGE`).')
      schema.response[415] ??= error('Unsupported Content-Type (`UNSUPPORTED_MEDIA_TYPE`).')
    }
    schema.response[500] ??= error('Unexpected server failure (`INTERNAL_ERROR`); nothing is leaked.')
    schema.response[503] ??= {
      ...error(
        'The database is unreachable or not answering (`SERVICE_UNAVAILABLE`: nothing was stored), or it stopped answering while committing (`OUTCOME_UNKNOWN`: retry with the same `Idempotency-Key`); retry after `Retry-After` seconds.',
      ),
      headers: { 'Retry-After': { type: 'integer', description: 'Seconds to wait before retrying.' } },
    }
  })

  app.setErrorHandler((error, request, reply) => {
    const appError = toAppError(error)
    if (!appError) {
      request.log.error({ err: error }, 'request failed')
      return reply.code(500).send({ error: 'internal server error', code: 'INTERNAL_ERROR' })
    }
    if (appError.statusCode >= 500) request.log.error({ err: appError.cause ?? appError }, appError.message)
    if (appError.headers) reply.headers(appError.headers)
    return reply.code(appError.statusCode).send({ error: appError.message, code: appError.code })
  })

  app.setNotFoundHandler((request, reply) => {
    // A page a person opened (outside /api) gets a page; API clients keep {error, code}.
    if (wantsPage(request.method, request.url)) {
      return reply.code(404).header('cache-control', 'no-cache').header('x-content-type-options', 'nosniff').type('text/html; charset=utf-8').send(NOT_FOUND_PAGE)
    }
    return reply.code(404).send({ error: `route ${request.method} ${request.url.split('?')[0]} not found`, code: 'NOT_FOUND' })
  })
}

export default fp(errorsPlugin, { name: 'errors' })
