// Request validation with two Ajv configurations. Query strings, path parameters and headers
// arrive as text, so their schemas may coerce ("20" → 20, "a" → ["a"]); a JSON body states its
// types itself, so `{"text": 12345}` must be refused rather than stored as "12345". Fastify's own
// validator factory (@fastify/ajv-compiler) builds both; each route part picks its compiler.
// As with serializers (serializer-compiler.ts), what is compiled is kept for the process: the
// test suite builds hundreds of apps with the same schemas, and compiling them was half of a build.
import { AjvCompiler } from '@fastify/ajv-compiler'
import type { Options as AjvOptions } from 'ajv'

interface RouteSchema {
  schema: unknown
  httpPart?: string
}
type Compile = (route: RouteSchema) => unknown
type Factory = (externalSchemas: unknown, options?: { customOptions?: AjvOptions }) => Compile

// The package's types describe the compile function as taking a bare schema; at run time
// Fastify calls it with { schema, method, url, httpPart } (lib/validator-compiler.js).
const pool = AjvCompiler() as unknown as Factory

/** Compiled validators by the shared schemas and options they were built with, then by part and schema. */
const compiled = new Map<string, Map<string, unknown>>()

/** A `schemaController.compilersFactory.buildValidator` that never coerces bodies. */
export function buildValidator(): ReturnType<typeof AjvCompiler> {
  const build: Factory = (externalSchemas, options) => {
    const coercing = pool(externalSchemas, options)
    const strict = pool(externalSchemas, { ...options, customOptions: { ...options?.customOptions, coerceTypes: false } })
    const contextKey = JSON.stringify([externalSchemas ?? null, options ?? null])
    let cache = compiled.get(contextKey)
    if (!cache) compiled.set(contextKey, (cache = new Map()))
    const known = cache
    return (route) => {
      const body = route.httpPart === 'body'
      const key = `${body ? 'strict' : 'coercing'} ${JSON.stringify(route.schema)}`
      if (!known.has(key)) known.set(key, body ? strict(route) : coercing(route))
      return known.get(key)
    }
  }
  return build as unknown as ReturnType<typeof AjvCompiler>
}
