// Captures real exchanges as OpenAPI examples. With OPENAPI_EXAMPLES_DIR set, the test helper's
// `api` appends the first successful exchange of each operation seen by this process to
// `<dir>/<pid>.jsonl`; `npm run openapi:examples` then picks one per operation into
// openapi/examples.json, which the openapi plugin merges into the document. A test
// (test/contract/examples.test.ts) validates every example against the document, so they stay true.
import { appendFileSync, mkdirSync } from 'node:fs'
import path from 'node:path'
import type { InjectOptions, LightMyRequestResponse } from 'fastify'
import { findOperation } from './openapi-validator.ts'

export interface CapturedExample {
  operationId: string
  template: string
  method: string
  url: string
  request?: unknown
  status: number
  response?: unknown
}

const dir = process.env.OPENAPI_EXAMPLES_DIR
const seen = new Set<string>()

/** The path and query of an injected request (the tests give `url` as a string). */
export function requestUrl(opts: InjectOptions): string {
  if (typeof opts.url === 'string') return opts.url
  return typeof opts.path === 'string' ? opts.path : '/'
}

export function captureExample(opts: InjectOptions, res: LightMyRequestResponse): void {
  if (!dir || res.statusCode >= 300) return
  const method = String(opts.method ?? 'GET').toUpperCase()
  const url = requestUrl(opts)
  const found = findOperation(method, url.split('?')[0] ?? url)
  const operationId = found?.operation.operationId
  if (!found || !operationId || seen.has(operationId)) return
  const requestType = String(opts.headers?.['content-type'] ?? (opts.payload !== undefined && typeof opts.payload === 'object' ? 'application/json' : ''))
  const responseType = String(res.headers['content-type'] ?? '')
  // JSON exchanges only: multipart and binary bodies are described by their schemas.
  if (opts.payload !== undefined && !requestType.startsWith('application/json')) return
  let request: unknown = opts.payload
  try {
    if (typeof request === 'string') request = JSON.parse(request)
  } catch {
    return
  }
  if (request !== undefined && (typeof request !== 'object' || Buffer.isBuffer(request))) return
  seen.add(operationId)
  const example: CapturedExample = {
    operationId,
    template: found.template,
    method,
    url,
    request,
    status: res.statusCode,
    response: responseType.startsWith('application/json') && res.body ? res.json() : undefined,
  }
  mkdirSync(dir, { recursive: true })
  appendFileSync(path.join(dir, `${process.pid}.jsonl`), `${JSON.stringify(example)}\n`)
}
