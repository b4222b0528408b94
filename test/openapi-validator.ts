// Validates a response against openapi/openapi.json: the path template, the method, the status
// and the JSON body must all be documented. Throws with a readable reason otherwise.
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import type { LightMyRequestResponse } from 'fastify'

interface Operation {
  operationId?: string
  responses?: Record<string, { content?: Record<string, { schema?: unknown }> }>
}

const file = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../openapi/openapi.json')

let cache: { doc: { paths: Record<string, Record<string, Operation>> }; ajv: Ajv2020; matchers: { template: string; re: RegExp }[] } | undefined
const validators = new Map<string, ValidateFunction>()

function load() {
  if (cache) return cache
  const doc = JSON.parse(readFileSync(file, 'utf8'))
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true })
  addFormats.default(ajv)
  ajv.addSchema({ $id: 'openapi.json', components: doc.components ?? {} })
  const matchers = Object.keys(doc.paths ?? {}).map((template) => ({
    template,
    re: new RegExp(
      `^${template
        .replace(/[.*+?^$()|[\]\\]/g, '\\$&')
        .replace(/\\?\{[^}]+\\?\}/g, '[^/]+')
        .replace(/\{[^}]+\}/g, '[^/]+')}$`,
    ),
  }))
  // Static paths first so /agents/me wins over /agents/{id}.
  matchers.sort((a, b) => (a.template.match(/\{/g)?.length ?? 0) - (b.template.match(/\{/g)?.length ?? 0))
  cache = { doc, ajv, matchers }
  return cache
}

function rewriteRefs(schema: unknown): unknown {
  return JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"openapi.json#/components/'))
}

/** The documented operation serving `method pathname`, if any (path template and operation). */
export function findOperation(method: string, pathname: string): { template: string; operation: Operation } | undefined {
  const { doc, matchers } = load()
  const match = matchers.find((m) => m.re.test(pathname))
  const operation = match && doc.paths[match.template]?.[method.toLowerCase()]
  return match && operation ? { template: match.template, operation } : undefined
}

export function assertMatchesOpenApi(method: string, url: string, res: LightMyRequestResponse): void {
  const pathname = url.split('?')[0] ?? url
  if (!pathname.startsWith('/api/') && pathname !== '/health' && !pathname.startsWith('/health/')) return
  const { doc, ajv, matchers } = load()
  const match = matchers.find((m) => m.re.test(pathname))
  if (!match) throw new Error(`OpenAPI: no documented path for ${method} ${pathname}`)
  const operation = doc.paths[match.template]?.[method.toLowerCase()]
  if (!operation) throw new Error(`OpenAPI: ${method} ${match.template} is not documented`)
  const status = String(res.statusCode)
  const response = operation.responses?.[status] ?? operation.responses?.[`${status[0]}XX`] ?? operation.responses?.default
  if (!response) throw new Error(`OpenAPI: ${method} ${match.template} does not document status ${status} (body: ${res.body.slice(0, 200)})`)
  const contentType = String(res.headers['content-type'] ?? '').split(';')[0] ?? ''
  if (!response.content) {
    if (res.body.length) throw new Error(`OpenAPI: ${method} ${match.template} ${status} documents no body but got ${contentType}`)
    return
  }
  const media = response.content[contentType]
  if (!media) throw new Error(`OpenAPI: ${method} ${match.template} ${status} does not document ${contentType || 'an empty body'}`)
  if (contentType !== 'application/json' || !media.schema) return
  const key = `${method} ${match.template} ${status}`
  let validate = validators.get(key)
  if (!validate) {
    validate = ajv.compile(rewriteRefs(media.schema) as object)
    validators.set(key, validate)
  }
  const body = res.json()
  if (!validate(body)) {
    throw new Error(`OpenAPI: ${method} ${match.template} ${status} body does not match: ${ajv.errorsText(validate.errors)}\n${res.body.slice(0, 500)}`)
  }
}
