// Response serialization compiled once per schema per process. fast-json-stringify builds a
// function for every response schema of every route, and that build is most of the time it takes
// to start the app (about three quarters of buildApp in a profile: the schemas are large and
// checked before compiling). One process builds one app in production, but the test suite builds
// hundreds, all with the same schemas: the compiled functions are pure (schema in, function
// out), so they are shared between apps whose shared schemas and options are the same.
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'
import { cached, compileCache } from './compile-cache.ts'

interface RouteSchema {
  schema: unknown
}
type Serialize = (data: unknown) => string
type Compile = (route: RouteSchema) => Serialize
type Factory = (externalSchemas: unknown, options?: unknown) => Compile

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value)

/** `{type: 'null'}` and nothing else (TypeBox's Null). */
const isNull = (schema: unknown): boolean => isObject(schema) && schema.type === 'null' && Object.keys(schema).length === 1

/** A schema fast-json-stringify can write with `nullable`: one inline type, no reference or combinator. */
const plainTyped = (schema: unknown): schema is Record<string, unknown> =>
  isObject(schema) &&
  typeof schema.type === 'string' &&
  schema.type !== 'null' &&
  !('$ref' in schema) &&
  !('anyOf' in schema) &&
  !('oneOf' in schema) &&
  !('allOf' in schema) &&
  !('nullable' in schema)

/**
 * A copy of `schema` in which every `anyOf: [T, null]` of an inline type is written `{...T,
 * nullable: true}`, for the serializer only (the OpenAPI document keeps the `anyOf`). For an
 * `anyOf`, fast-json-stringify picks the branch by validating the value with ajv, on every
 * response, and compiles those validators in every process (22 s of a test run's CPU); with
 * `nullable` it writes `null` or the value with one comparison. Both write the same JSON.
 */
export function nullableForSerializer(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(nullableForSerializer)
  if (!isObject(schema)) return schema
  const copy: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(schema)) copy[key] = nullableForSerializer(value)
  const branches = copy.anyOf
  if (Array.isArray(branches) && branches.length === 2) {
    const typed = isNull(branches[0]) ? branches[1] : isNull(branches[1]) ? branches[0] : undefined
    if (plainTyped(typed)) {
      const { anyOf: _anyOf, ...siblings } = copy
      return { ...siblings, ...typed, nullable: true }
    }
  }
  return copy
}

const mapValues = (schemas: unknown): unknown => (isObject(schemas) ? Object.fromEntries(Object.entries(schemas).map(([id, schema]) => [id, nullableForSerializer(schema)])) : schemas)

/** A `schemaController.compilersFactory.buildSerializer` that reuses what it compiled before. */
export function buildSerializer(): ReturnType<typeof SerializerSelector> {
  const select = SerializerSelector() as unknown as Factory
  const build: Factory = (externalSchemas, options) => {
    // Made only on a miss: building it hashes every shared schema.
    let compile: Compile | undefined
    const cache = compileCache<Serialize>('serializer', externalSchemas, options)
    return (route) => cached(cache, 'serialize', route.schema, () => (compile ??= select(mapValues(externalSchemas), options))({ ...route, schema: nullableForSerializer(route.schema) }))
  }
  return build as unknown as ReturnType<typeof SerializerSelector>
}
