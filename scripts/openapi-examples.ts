// Picks one captured exchange per operation (see test/openapi-examples.ts) into
// openapi/examples.json. Usage: run tests with OPENAPI_EXAMPLES_DIR=<dir>, then
//   npm run openapi:examples -- <dir> [--replace]   (then npm run openapi:export and sdk:generate)
// Secrets in the captured bodies (keys, tokens, signing secrets) are replaced by placeholders of
// the same form, so the document never carries a credential, not even a test one.
import { readdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { CapturedExample } from '../test/openapi-examples.ts'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const dir = process.argv.slice(2).find((a) => !a.startsWith('--')) ?? process.env.OPENAPI_EXAMPLES_DIR
if (!dir) {
  console.error('usage: npm run openapi:examples -- <dir the tests wrote with OPENAPI_EXAMPLES_DIR>')
  process.exit(1)
}

const SECRETS: [RegExp, string][] = [
  [/^svc_int_[A-Za-z0-9+/=_-]{16,}$/, 'svc_int_EXAMPLEexampleEXAMPLEexampleEXAMPLEexample000'],
  [/^svc_[A-Za-z0-9+/=_-]{16,}$/, 'svc_EXAMPLEexampleEXAMPLEexampleEXAMPLEexample00000'],
  [/^whsec_[A-Za-z0-9+/=_-]{16,}$/, 'whsec_EXAMPLEexampleEXAMPLEexampleEXAMPLEexample0'],
  [/^inv_[A-Za-z0-9+/=_-]{16,}$/, 'inv_EXAMPLEexampleEXAMPLEexampleEXAMPLEexample000'],
  [/^eyJ[\w-]+\.[\w-]+\.[\w-]+$/, 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJleGFtcGxlIn0.c2lnbmF0dXJl'],
  [/inv_[A-Za-z0-9%+/=_-]{16,}/, 'inv_EXAMPLEexampleEXAMPLEexampleEXAMPLEexample000'],
]

function redact(value: unknown): unknown {
  if (typeof value === 'string') {
    // The first matching form only (a placeholder must not be matched again by a shorter prefix).
    const secret = SECRETS.find(([re]) => re.test(value))
    return secret ? value.replace(secret[0], secret[1]) : value
  }
  if (Array.isArray(value)) return value.map(redact)
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redact(v)]))
  return value
}

const captured: CapturedExample[] = []
for (const file of (await readdir(dir)).filter((f) => f.endsWith('.jsonl')).sort()) {
  for (const line of (await readFile(path.join(dir, file), 'utf8')).split('\n')) if (line.trim()) captured.push(JSON.parse(line) as CapturedExample)
}

// One per operation: the smallest exchange (short examples read best), ties by text.
const best = new Map<string, { example: CapturedExample; text: string }>()
for (const example of captured) {
  const text = JSON.stringify(example)
  const current = best.get(example.operationId)
  if (!current || text.length < current.text.length || (text.length === current.text.length && text < current.text)) best.set(example.operationId, { example, text })
}

// A capture of part of the suite (the test files of a new route) replaces only the operations it
// saw; the others keep their examples. `--replace` starts from nothing (a whole-suite capture).
const file = path.join(root, 'openapi/examples.json')
const previous = process.argv.includes('--replace') ? {} : (JSON.parse(await readFile(file, 'utf8').catch(() => '{}')) as Record<string, unknown>)
const fresh = Object.fromEntries([...best.entries()].map(([id, { example }]) => [id, redact({ url: example.url, request: example.request, status: example.status, response: example.response })]))
const out = Object.fromEntries(Object.entries({ ...previous, ...fresh }).sort(([a], [b]) => a.localeCompare(b)))
await writeFile(file, `${JSON.stringify(out, null, 2)}\n`)
console.log(`wrote openapi/examples.json: ${best.size} operations from ${captured.length} captured exchanges (${Object.keys(out).length} in all)`)
