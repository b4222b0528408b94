// Rules shared by the identity modules (bootstrap, accounts, invites, agents): the TypeBox
// fragments that carry them into OpenAPI, and the mapping of a failed schema check to the
// specific error codes the spec names (weak password, invalid e-mail, invalid role).
import { Type, type Static, type TSchema } from 'typebox'
import { AppError } from '../../lib/errors.ts'
import { MIN_PASSWORD_LENGTH } from '../../lib/password.ts'

/** bcrypt only reads the first 72 bytes; longer passwords are refused rather than truncated. */
export const MAX_PASSWORD_BYTES = 72
export const MAX_EMAIL_LENGTH = 254

/**
 * The e-mail rule, as a pattern rather than `format: email`: generators and fuzzers read `format:
 * email` as RFC 5321 (`d1@test` passes), while the rule here wants a dotted domain name and ASCII
 * (ajv-formats' "full" e-mail). The pattern is the rule itself, so the document and the server agree.
 */
export const EMAIL_PATTERN = "^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?\\.)+[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?$"
export const EmailField = Type.String({
  pattern: EMAIL_PATTERN,
  maxLength: MAX_EMAIL_LENGTH,
  description: 'E-mail address: ASCII, a dotted domain name (`name@example.com`; `name@localhost` is refused). Compared and stored in lower case.',
})
export const PasswordField = Type.String({
  minLength: MIN_PASSWORD_LENGTH,
  maxLength: MAX_PASSWORD_BYTES,
  description: `At least ${MIN_PASSWORD_LENGTH} characters, at most ${MAX_PASSWORD_BYTES} bytes (UTF-8).`,
})
export const DisplayNameField = Type.String({ minLength: 1, maxLength: 255, pattern: '\\S', description: '1-255 characters, not blank.' })
export const AgentNameField = Type.String({
  minLength: 3,
  maxLength: 100,
  pattern: '^[A-Za-z0-9-]+$',
  description: 'Letters (A-Z, a-z), digits and hyphens, 3-100 characters; unique in the workspace, ignoring case.',
})
export const HumanRoleField = Type.Enum(['member', 'observer'], { description: 'Role of an invited human (default `member`).' })
export const UrlField = Type.String({ maxLength: 2048, pattern: '^https?://[^\\s]+$', description: 'An http(s) URL.' })
/** Largest free-form `metadata`, as JSON text. Its depth is bounded for every input (src/lib/input-guard.ts). */
export const MAX_METADATA_BYTES = 16_384
export const MetadataField = Type.Object(
  {},
  {
    additionalProperties: true,
    description: `Free-form JSON object: at most ${MAX_METADATA_BYTES} bytes as JSON, nested at most 32 levels.`,
  },
)

/** The size bound of a free-form `metadata` object (its depth was checked before parsing ended). */
export function assertMetadata(metadata: unknown): void {
  if (metadata === undefined || metadata === null) return
  if (Buffer.byteLength(JSON.stringify(metadata), 'utf8') > MAX_METADATA_BYTES) {
    throw new AppError('VALIDATION_ERROR', `'metadata' must be at most ${MAX_METADATA_BYTES} bytes as JSON`)
  }
}

/**
 * `T | null` as `type: [T, 'null']`. A `anyOf: [T, null]` would let Ajv's type coercion turn a
 * JSON null into "" while it tries the string branch.
 */
export function nullable<T extends TSchema>(schema: T) {
  const type = (schema as unknown as { type: string }).type
  return Type.Unsafe<Static<T> | null>({ ...schema, type: [type, 'null'] })
}

export const normalizeEmail = (email: string): string => email.trim().toLowerCase()

/** The password rules, for the byte limit a schema's maxLength (characters) cannot express. */
export function assertPassword(password: string): void {
  if (password.length < MIN_PASSWORD_LENGTH) throw weakPassword()
  if (Buffer.byteLength(password, 'utf8') > MAX_PASSWORD_BYTES) {
    throw new AppError('VALIDATION_ERROR', `password must be at most ${MAX_PASSWORD_BYTES} bytes`)
  }
}

const weakPassword = (): AppError => new AppError('WEAK_PASSWORD', `password must be at least ${MIN_PASSWORD_LENGTH} characters`)

interface ValidationItem {
  instancePath?: string
  keyword?: string
  message?: string
}

/**
 * Routes of these modules use `attachValidation`; this turns a schema failure into the specific
 * code the spec asks for, or lets the generic VALIDATION_ERROR answer through.
 */
export function assertValidRequest(request: { validationError?: Error & { validation?: ValidationItem[]; validationContext?: string } }): void {
  const error = request.validationError
  if (!error) return
  const first = error.validation?.[0]
  const path = first?.instancePath ?? ''
  const field = path.split('/').pop() ?? ''
  if (error.validationContext === 'body') {
    const password = field === 'password' || field === 'new_password'
    if (password && first?.keyword === 'minLength') throw weakPassword()
    if (password && first?.keyword === 'maxLength') throw new AppError('VALIDATION_ERROR', `password must be at most ${MAX_PASSWORD_BYTES} bytes`)
    if (field === 'email' && (first?.keyword === 'pattern' || first?.keyword === 'format' || first?.keyword === 'maxLength')) {
      throw new AppError('INVALID_EMAIL', `'${path.replace(/^\//, '').replaceAll('/', '.')}' is not a valid e-mail address`)
    }
    if (field === 'role' && first?.keyword === 'enum') throw new AppError('INVALID_ROLE', "role must be 'member' or 'observer'")
  }
  throw error
}
