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

/** A `schemaController.compilersFactory.buildSerializer` that reuses what it compiled before. */
export function buildSerializer(): ReturnType<typeof SerializerSelector> {
  const select = SerializerSelector() as unknown as Factory
  const build: Factory = (externalSchemas, options) => {
    // Made only on a miss: building it hashes every shared schema.
    let compile: Compile | undefined
    const cache = compileCache<Serialize>('serializer', externalSchemas, options)
    return (route) => cached(cache, 'serialize', route.schema, () => (compile ??= select(externalSchemas, options))(route))
  }
  return build as unknown as ReturnType<typeof SerializerSelector>
}
