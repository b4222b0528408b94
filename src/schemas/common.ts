// Schemas shared by many routes. Those with an $id are registered once (src/plugins/openapi.ts)
// and become OpenAPI components; routes refer to them with Type.Ref / { $ref: 'Name#' }.
import { Type, type Static } from 'typebox'

export const ErrorSchema = Type.Object(
  {
    error: Type.String({ description: 'Human-readable message.' }),
    code: Type.String({ description: 'Stable machine-readable code; the closed list is in docs/errors.md.' }),
  },
  { $id: 'Error', title: 'Error', additionalProperties: false },
)

export const ErrorRef = Type.Ref('Error')

export const Uuid = Type.String({ format: 'uuid' })
export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC timestamp.' })

export const IdParams = Type.Object({ id: Uuid }, { additionalProperties: false })

export const SHARED_SCHEMAS = [ErrorSchema]

export type ErrorBody = Static<typeof ErrorSchema>

/** Standard error responses to spread into a route's `response`. */
export const errors = (...statuses: number[]): Record<number, typeof ErrorRef> =>
  Object.fromEntries(statuses.map((s) => [s, ErrorRef]))
