// A value of a JSON schema with every property present, for serializer tests.

export type SampleSchema = Record<string, unknown> & {
  $ref?: string
  type?: string
  format?: string
  const?: unknown
  enum?: unknown[]
  anyOf?: SampleSchema[]
  items?: SampleSchema
  properties?: Record<string, SampleSchema>
}

/**
 * A value of `schema` with every property present (each union's first typed branch); a `$ref`
 * is followed through `shared` (by id), to a depth of 8, and is null when it names none of them.
 */
export function sampleOf(schema: SampleSchema, shared: Record<string, unknown> = {}, depth = 0): unknown {
  if (schema.$ref) {
    const target = shared[schema.$ref.split('#')[0]!] as SampleSchema | undefined
    return target && depth <= 8 ? sampleOf(target, shared, depth + 1) : null
  }
  if (schema.const !== undefined) return schema.const
  if (schema.enum) return schema.enum[0]
  if (schema.anyOf) return sampleOf(schema.anyOf.find((b) => b.type !== 'null') ?? schema.anyOf[0]!, shared, depth)
  switch (schema.type) {
    case 'string':
      return schema.format === 'date-time' ? '2026-11-27T05:00:00.000Z' : schema.format === 'uuid' ? '01a21b4c-23d7-718a-b937-935c5a9d8a8d' : 'text'
    case 'integer':
    case 'number':
      return 3
    case 'boolean':
      return true
    case 'array':
      return schema.items ? [sampleOf(schema.items, shared, depth + 1)] : []
    case 'object':
      return Object.fromEntries(Object.entries(schema.properties ?? {}).map(([key, prop]) => [key, sampleOf(prop, shared, depth + 1)]))
    default:
      return null
  }
}
