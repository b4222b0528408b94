// Request validation with two Ajv configurations. Query strings, path parameters and headers
// arrive as text, so their schemas may coerce ("20" → 20, "a" → ["a"]); a JSON body states its
// types itself, so `{"text": 12345}` must be refused rather than stored as "12345". Fastify's own
// validator factory (@fastify/ajv-compiler) builds both; each route part picks its compiler.
import { AjvCompiler } from '@fastify/ajv-compiler'
import type { Options as AjvOptions } from 'ajv'

interface RouteSchema {
  schema: unknown
  httpPart?: string
}
type Compile = (route: RouteSchema) => unknown
type Factory = (externalSchemas: unknown, options?: { customOptions?: AjvOptions }) => Compile

/** A `schemaController.compilersFactory.buildValidator` that never coerces bodies. */
export function buildValidator(): ReturnType<typeof AjvCompiler> {
  // The package's types describe the compile function as taking a bare schema; at run time
  // Fastify calls it with { schema, method, url, httpPart } (lib/validator-compiler.js).
  const pool = AjvCompiler() as unknown as Factory
  const build: Factory = (externalSchemas, options) => {
    const coercing = pool(externalSchemas, options)
    const strict = pool(externalSchemas, { ...options, customOptions: { ...options?.customOptions, coerceTypes: false } })
    return (route) => (route.httpPart === 'body' ? strict(route) : coercing(route))
  }
  return build as unknown as ReturnType<typeof AjvCompiler>
}
