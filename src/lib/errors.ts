// One error type for the whole service. Every error response is {error, code}; the codes form
// the closed list below, documented in docs/errors.md (a test keeps the two in step).

export const ERROR_CODES = {
  // 400
  VALIDATION_ERROR: 400,
  INVALID_JSON: 400,
  WEAK_PASSWORD: 400,
  INVALID_EMAIL: 400,
  DUPLICATE_NAME: 400,
  INVALID_ROLE: 400,
  INVALID_CURSOR: 400,
  INVALID_URL: 400,
  INVALID_EMOJI: 400,
  INVITE_INVALID: 400,
  INVITE_EXPIRED: 400,
  INVITE_USED: 400,
  INVITE_EMAIL_MISMATCH: 400,
  SELF_DM: 400,
  MISSING_IDEMPOTENCY_BODY: 400,
  BAD_REQUEST: 400,
  THREAD_NOT_ROOT: 400,
  WRONG_PASSWORD: 400,
  // 401
  UNAUTHORIZED: 401,
  // 403
  FORBIDDEN: 403,
  APPROVAL_PENDING: 403,
  REGISTRATION_CLOSED: 403,
  // 404
  NOT_FOUND: 404,
  // 405
  METHOD_NOT_ALLOWED: 405,
  // 406
  NOT_ACCEPTABLE: 406,
  // 408
  REQUEST_TIMEOUT: 408,
  // 409
  CONFLICT: 409,
  ALREADY_BOOTSTRAPPED: 409,
  EMAIL_TAKEN: 409,
  NAME_TAKEN: 409,
  ALREADY_MEMBER: 409,
  IDEMPOTENCY_KEY_REUSED: 409,
  IDEMPOTENCY_IN_PROGRESS: 409,
  ALREADY_DECIDED: 409,
  STREAM_ENDED: 409,
  TOO_MANY_STREAMS: 409,
  // 410
  GONE: 410,
  // 413
  PAYLOAD_TOO_LARGE: 413,
  STREAM_TOO_LONG: 413,
  // 414
  URI_TOO_LONG: 414,
  // 415
  UNSUPPORTED_MEDIA_TYPE: 415,
  // 422
  UNPROCESSABLE: 422,
  // 429
  RATE_LIMITED: 429,
  LOOP_DETECTED: 429,
  // 431
  HEADERS_TOO_LARGE: 431,
  // 500
  INTERNAL_ERROR: 500,
  // 503
  SERVICE_UNAVAILABLE: 503,
  OUTCOME_UNKNOWN: 503,
} as const

export type ErrorCode = keyof typeof ERROR_CODES

export class AppError extends Error {
  readonly code: ErrorCode
  readonly statusCode: number
  readonly headers?: Record<string, string>

  constructor(code: ErrorCode, message: string, options: { headers?: Record<string, string>; cause?: unknown } = {}) {
    super(message, { cause: options.cause })
    this.name = 'AppError'
    this.code = code
    this.statusCode = ERROR_CODES[code]
    this.headers = options.headers
  }
}

export const notFound = (what = 'resource'): AppError => new AppError('NOT_FOUND', `${what} not found`)
export const forbidden = (why = 'you do not have permission for this action'): AppError => new AppError('FORBIDDEN', why)
export const badRequest = (message: string): AppError => new AppError('VALIDATION_ERROR', message)
export const unauthorized = (message = 'missing or invalid credentials'): AppError => new AppError('UNAUTHORIZED', message)
