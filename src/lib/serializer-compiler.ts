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

/** The ids of the shared schemas `schema` refers to (`{ $ref: 'Name' }`, `'Name#'`, `'Name#/properties/x'`). */
function refIds(schema: unknown, into: Set<string>): Set<string> {
  if (Array.isArray(schema)) for (const item of schema) refIds(item, into)
  else if (isObject(schema))
    for (const [key, value] of Object.entries(schema)) {
      if (key === '$ref' && typeof value === 'string') into.add(value.split('#')[0]!)
      else refIds(value, into)
    }
  return into
}

/**
 * The shared schemas a route's schema needs: those it refers to, and theirs in turn. fast-json-stringify
 * checks every shared schema it is given against the JSON Schema meta-schema, once for each route it
 * compiles; given all forty, that check was most of the serializers' build at start-up. A reference
 * that names none of them (a local `#/…`) leaves the whole set, as before.
 */
export function sharedSchemasFor(schema: unknown, shared: Record<string, unknown>): Record<string, unknown> {
  const needed: Record<string, unknown> = {}
  const pending = [...refIds(schema, new Set())]
  for (let id = pending.pop(); id !== undefined; id = pending.pop()) {
    if (id in needed) continue
    if (!(id in shared)) return shared
    needed[id] = shared[id]
    pending.push(...refIds(shared[id], new Set()))
  }
  return needed
}

const mapValues = (schemas: unknown): Record<string, unknown> => (isObject(schemas) ? Object.fromEntries(Object.entries(schemas).map(([id, schema]) => [id, nullableForSerializer(schema)])) : {})

/** A `schemaController.compilersFactory.buildSerializer` that reuses what it compiled before. */
export function buildSerializer(): ReturnType<typeof SerializerSelector> {
  const select = SerializerSelector() as unknown as Factory
  const build: Factory = (externalSchemas, options) => {
    // Made only on a miss.
    let shared: Record<string, unknown> | undefined
    const cache = compileCache<Serialize>('serializer', externalSchemas, options)
    return (route) =>
      cached(cache, 'serialize', route.schema, () => {
        shared ??= mapValues(externalSchemas)
        const schema = nullableForSerializer(route.schema)
        return select(sharedSchemasFor(schema, shared), options)({ ...route, schema })
      })
  }
  return build as unknown as ReturnType<typeof SerializerSelector>
}
