// Every operation carries a real exchange (openapi/examples.json, captured from the test suite by
// `npm run openapi:examples`): its parameters, its JSON request body and its JSON success
// response. `npm run openapi:lint` checks each example against its schema
// (no-invalid-media-type-examples, no-invalid-parameter-examples), so a schema change that makes
// an example false fails CI until the examples are captured again.
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'

interface Media {
  examples?: Record<string, { value: unknown }>
}
interface Operation {
  operationId: string
  parameters?: { name: string; in: string; example?: unknown }[]
  requestBody?: { content: Record<string, Media> }
  responses: Record<string, { content?: Record<string, Media> }>
}

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const doc = JSON.parse(await readFile(path.join(root, 'openapi/openapi.json'), 'utf8')) as { paths: Record<string, Record<string, Operation>> }
const operations = Object.values(doc.paths).flatMap((ops) => Object.values(ops))

// Operations no test yet answers with a 2xx through the helper, so nothing real to capture. A test
// that does removes its entry here (the assertion below then requires the example).
const NOT_YET_EXERCISED = new Set<string>([])

t.test('each operation has an example request and response', async (t) => {
  const missing: string[] = []
  for (const op of operations.filter((o) => !NOT_YET_EXERCISED.has(o.operationId))) {
    const json = op.requestBody?.content['application/json']
    if (json && !json.examples) missing.push(`${op.operationId}: request body`)
    const success = Object.entries(op.responses).filter(([status]) => status.startsWith('2'))
    const jsonSuccess = success.filter(([, r]) => r.content?.['application/json'])
    if (jsonSuccess.length && !jsonSuccess.some(([, r]) => r.content?.['application/json']?.examples)) missing.push(`${op.operationId}: response`)
    const pathParams = (op.parameters ?? []).filter((p) => p.in === 'path')
    if (pathParams.some((p) => p.example === undefined)) missing.push(`${op.operationId}: path parameters`)
  }
  t.same(missing, [])
  const stale = operations.filter((o) => NOT_YET_EXERCISED.has(o.operationId) && Object.values(o.responses).some((r) => r.content?.['application/json']?.examples))
  t.same(
    stale.map((o) => o.operationId),
    [],
    'an operation with an example is no longer listed as not exercised',
  )
})
