// What the validator and serializer compilers (validator-compiler.ts, serializer-compiler.ts) keep
// for the process: compiled functions by the shared schemas they were built with, then by route
// schema. Both keys are cheap from the second build on: the shared schemas are named by their ids
// (in one process an id always stands for the same module constant), and a route schema is first
// looked up as the very object it is (routes pass the same constants on every build), and only
// then by its JSON text.

export interface CompileCache<T> {
  byObject: WeakMap<object, Map<string, T>>
  byText: Map<string, T>
}

const caches = new Map<string, CompileCache<unknown>>()

/** The cache for compilers built with these shared schemas and options. */
export function compileCache<T>(kind: string, externalSchemas: unknown, options: unknown): CompileCache<T> {
  const ids = externalSchemas && typeof externalSchemas === 'object' ? Object.keys(externalSchemas).sort().join(' ') : ''
  const key = `${kind} ${ids} ${JSON.stringify(options ?? null)}`
  let cache = caches.get(key)
  if (!cache) caches.set(key, (cache = { byObject: new WeakMap(), byText: new Map() }))
  return cache as CompileCache<T>
}

/** The compiled function for `schema` (as `variant`: strict or coercing), compiling it on a miss. */
export function cached<T>(cache: CompileCache<T>, variant: string, schema: unknown, compile: () => T): T {
  const object = schema !== null && typeof schema === 'object' ? schema : null
  let byVariant = object ? cache.byObject.get(object) : undefined
  const hit = byVariant?.get(variant)
  if (hit !== undefined) return hit
  const text = `${variant} ${JSON.stringify(schema)}`
  let value = cache.byText.get(text)
  if (value === undefined) cache.byText.set(text, (value = compile()))
  if (object) {
    if (!byVariant) cache.byObject.set(object, (byVariant = new Map()))
    byVariant.set(variant, value)
  }
  return value
}
