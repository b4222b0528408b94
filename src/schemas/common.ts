// Schemas shared by many routes. Those with an $id are registered once (src/plugins/openapi.ts)
// and become OpenAPI components; routes refer to them with Type.Ref / { $ref: 'Name#' }.
import { Type } from 'typebox'
import { ERROR_CODES, type ErrorCode } from '../lib/errors.ts'

export const ERROR_COMPONENT_DESCRIPTION = 'Every error response: a message for people and a code for programs.'

export const ErrorSchema = Type.Object(
  {
    error: Type.String({ description: 'Human-readable message.' }),
    // The enum is the closed list itself (src/lib/errors.ts), the same constant docs/errors.md is
    // checked against (test/identity/errors-doc.test.ts): a new code changes both.
    code: Type.Unsafe<ErrorCode>({
      type: 'string',
      enum: Object.keys(ERROR_CODES),
      description: 'Stable machine-readable code from a closed list; each code and its HTTP status are in docs/errors.md.',
    }),
  },
  { $id: 'Error', title: 'Error', description: ERROR_COMPONENT_DESCRIPTION, additionalProperties: false },
)

export const ErrorRef = Type.Ref('Error')

export const Uuid = Type.String({ format: 'uuid' })
export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC timestamp.' })

export const IdParams = Type.Object({ id: Uuid }, { additionalProperties: false })

export const SHARED_SCHEMAS = [ErrorSchema]

/** Standard error responses to spread into a route's `response`. */
export const errors = (...statuses: number[]): Record<number, typeof ErrorRef> => Object.fromEntries(statuses.map((s) => [s, ErrorRef]))
