// API failures as sentences a person understands: every `code` of docs/errors.md that a person
// can meet in this UI maps to one; anything else falls back to a sentence per HTTP status.
export class ApiError extends Error {
  readonly code: string
  readonly status: number
  constructor(status: number, code: string, message: string) {
    super(message)
    this.status = status
    this.code = code
  }
}

const SENTENCES: Record<string, string> = {
  UNAUTHORIZED: 'Your session has ended. Please sign in again.',
  FORBIDDEN: 'You do not have permission to do that.',
  NOT_FOUND: 'That no longer exists, or you do not have access to it.',
  VALIDATION_ERROR: 'Some of what you entered is not valid. Please check it and try again.',
  WEAK_PASSWORD: 'The password must be at least 12 characters long.',
  INVITE_INVALID: 'This invite link is not valid. Ask the person who invited you for a new one.',
  INVITE_USED: 'This invite has already been used. Sign in with your e-mail and password instead.',
  INVITE_EXPIRED: 'This invite has expired (invites last 7 days). Ask the workspace owner to send a new one.',
  INVITE_EMAIL_MISMATCH: 'This invite was sent to a different e-mail address.',
  NAME_TAKEN: 'That name is already taken. Choose another one.',
  CONFLICT: 'That already exists.',
  EMAIL_TAKEN: 'An account with that e-mail address already exists.',
  PAYLOAD_TOO_LARGE: 'That is too large to send. Files can be at most 10 MB.',
  INVALID_EMAIL: 'That is not a valid e-mail address.',
  INVALID_ROLE: 'Choose member or observer as the role.',
  INVALID_URL: 'That address cannot be used. Use a public http(s) URL.',
  DUPLICATE_NAME: 'Two items have the same name. Make each name unique.',
  ALREADY_MEMBER: 'They are already a member of this channel.',
  ALREADY_DECIDED: 'Someone has already answered this request; its outcome is shown instead.',
  SELF_DM: 'You cannot start a direct message with yourself.',
  UNSUPPORTED_MEDIA_TYPE: 'That kind of request is not supported.',
  RATE_LIMITED: 'Too many requests right now. Wait a moment and try again.',
  THREAD_NOT_ROOT: 'Replies go in the thread of the first message; you cannot start a thread under a reply.',
  INVALID_EMOJI: 'That is not an emoji that can be used as a reaction.',
  STREAM_ENDED: 'This reply has already ended, so it cannot change any more.',
  TOO_MANY_STREAMS: 'This agent is already writing as many replies at once as it may. Let one finish first.',
  STREAM_TOO_LONG: 'That is more text than a reply may hold.',
  LOOP_DETECTED: 'Agents have been posting here on their own for a while, so agent posts are paused until a person writes here or the workspace loop window passes.',
  SERVICE_UNAVAILABLE: 'The service is temporarily unavailable. Try again in a moment.',
  OUTCOME_UNKNOWN: 'The server could not confirm whether that was saved. Reload to check, then try again if it is missing.',
  INTERNAL_ERROR: 'Something went wrong on the server. Try again; if it keeps happening, tell the workspace owner.',
  NETWORK: 'Cannot reach the server. Check your connection and try again.',
  INVALID_JSON: 'The request was not understood. Reload the page and try again.',
  BAD_REQUEST: 'The request was not understood. Reload the page and try again.',
  INVALID_CURSOR: 'That page of results is no longer available. Reload and try again.',
  MISSING_IDEMPOTENCY_BODY: 'The request was not understood. Reload the page and try again.',
  APPROVAL_PENDING: 'Your account is waiting for the workspace owner to approve it.',
  REGISTRATION_CLOSED: 'This workspace does not accept sign-ups. Ask its owner for an invitation.',
  WRONG_PASSWORD: 'The current password is not right. Nothing was changed.',
  METHOD_NOT_ALLOWED: 'That action is not available. Reload the page and try again.',
  NOT_ACCEPTABLE: 'That action is not available. Reload the page and try again.',
  REQUEST_TIMEOUT: 'The server took too long to answer. Try again.',
  ALREADY_BOOTSTRAPPED: 'This workspace has already been set up.',
  IDEMPOTENCY_KEY_REUSED: 'That was already sent with different content. Reload and try again.',
  IDEMPOTENCY_IN_PROGRESS: 'That is still being processed. Wait a moment and try again.',
  GONE: 'That is no longer available.',
  URI_TOO_LONG: 'That request is too long. Shorten what you entered and try again.',
  UNPROCESSABLE: 'Some of what you entered cannot be used. Please check it and try again.',
  HEADERS_TOO_LARGE: 'That request is too large. Sign out and in again, then try again.',
}

/** Every code in SENTENCES (a test checks that each code of the API has one). */
export const SENTENCE_CODES: readonly string[] = Object.keys(SENTENCES)

const BY_STATUS: Record<number, string> = {
  400: SENTENCES.VALIDATION_ERROR!,
  401: SENTENCES.UNAUTHORIZED!,
  403: SENTENCES.FORBIDDEN!,
  404: SENTENCES.NOT_FOUND!,
  409: SENTENCES.CONFLICT!,
  413: SENTENCES.PAYLOAD_TOO_LARGE!,
  429: SENTENCES.RATE_LIMITED!,
  503: SENTENCES.SERVICE_UNAVAILABLE!,
}

/**
 * The sentence for a failure. `context` gives sentences that say more where the screen knows
 * what the code means there (e.g. CONFLICT on redelivery: the webhook is turned off).
 */
export function sentenceFor(error: unknown, context: Partial<Record<string, string>> = {}): string {
  if (error instanceof ApiError) {
    return context[error.code] ?? SENTENCES[error.code] ?? BY_STATUS[error.status] ?? SENTENCES.INTERNAL_ERROR!
  }
  return SENTENCES.NETWORK!
}
