// Request validation with two Ajv configurations. Query strings, path parameters and headers
// arrive as text, so their schemas may coerce ("20" → 20, "a" → ["a"]); a JSON body states its
// types itself, so `{"text": 12345}` must be refused rather than stored as "12345". Fastify's own
// validator factory (@fastify/ajv-compiler) builds both; each route part picks its compiler.
// As with serializers (serializer-compiler.ts), what is compiled is kept for the process: the
// test suite builds hundreds of apps with the same schemas, and compiling them was half of a build.
import { AjvCompiler } from '@fastify/ajv-compiler'
import type { Options as AjvOptions } from 'ajv'
import { cached, compileCache } from './compile-cache.ts'

interface RouteSchema {
  schema: unknown
  httpPart?: string
}
type Compile = (route: RouteSchema) => unknown
type Factory = (externalSchemas: unknown, options?: { customOptions?: AjvOptions }) => Compile

// The package's types describe the compile function as taking a bare schema; at run time
// Fastify calls it with { schema, method, url, httpPart } (lib/validator-compiler.js).
const pool = AjvCompiler() as unknown as Factory

/** A `schemaController.compilersFactory.buildValidator` that never coerces bodies. */
export function buildValidator(): ReturnType<typeof AjvCompiler> {
  const build: Factory = (externalSchemas, options) => {
    // Made only on a miss: building one hashes every shared schema.
    let coercing: Compile | undefined
    let strict: Compile | undefined
    const cache = compileCache<unknown>('validator', externalSchemas, options)
    return (route) =>
      route.httpPart === 'body'
        ? cached(cache, 'strict', route.schema, () => (strict ??= pool(externalSchemas, { ...options, customOptions: { ...options?.customOptions, coerceTypes: false } }))(route))
        : cached(cache, `coercing ${route.httpPart ?? ''}`, route.schema, () => (coercing ??= pool(externalSchemas, options))(route))
  }
  return build as unknown as ReturnType<typeof AjvCompiler>
}
