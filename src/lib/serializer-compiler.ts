// Response serialization compiled once per schema per process. fast-json-stringify builds a
// function for every response schema of every route, and that build is most of the time it takes
// to start the app (about three quarters of buildApp in a profile: the schemas are large and
// checked before compiling). One process builds one app in production, but the test suite builds
// hundreds, all with the same schemas: the compiled functions are pure (schema in, function
// out), so they are shared between apps whose shared schemas and options are the same.
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'

interface RouteSchema {
  schema: unknown
}
type Serialize = (data: unknown) => string
type Compile = (route: RouteSchema) => Serialize
type Factory = (externalSchemas: unknown, options?: unknown) => Compile

/** Compiled serializers by the shared schemas and options they were built with, then by schema. */
const compiled = new Map<string, Map<string, Serialize>>()

/** A `schemaController.compilersFactory.buildSerializer` that reuses what it compiled before. */
export function buildSerializer(): ReturnType<typeof SerializerSelector> {
  const select = SerializerSelector() as unknown as Factory
  const build: Factory = (externalSchemas, options) => {
    const compile = select(externalSchemas, options)
    const contextKey = JSON.stringify([externalSchemas ?? null, options ?? null])
    let cache = compiled.get(contextKey)
    if (!cache) compiled.set(contextKey, (cache = new Map()))
    const known = cache
    return (route) => {
      const key = JSON.stringify(route.schema)
      let serialize = known.get(key)
      if (!serialize) known.set(key, (serialize = compile(route)))
      return serialize
    }
  }
  return build as unknown as ReturnType<typeof SerializerSelector>
}
