// The published document as generators and Swagger UI read it: named components, optional
// defaults, a binary upload, the closed error codes, real descriptions, a relative server, and a
// /docs page whose CSP works over plain http by a host name.
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { ERROR_CODES } from '../../src/lib/errors.ts'
import { build } from '../helper.ts'

interface Doc {
  servers: { url: string }[]
  components: { schemas: Record<string, { description?: string; properties?: Record<string, { enum?: string[] }> }> }
  paths: Record<
    string,
    Record<
      string,
      {
        operationId?: string
        parameters?: { name: string; in: string; required?: boolean; schema?: { default?: unknown } }[]
        requestBody?: { content: Record<string, { schema: { type?: unknown; properties?: Record<string, { format?: string; type?: unknown }> }; encoding?: Record<string, unknown> }> }
        responses: Record<string, { description: string }>
      }
    >
  >
}

const file = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../openapi/openapi.json')
const doc = JSON.parse(await readFile(file, 'utf8')) as Doc
const operations = Object.values(doc.paths).flatMap((ops) => Object.values(ops))

t.test('every resource and list shape is a named component with a description', async (t) => {
  const names = ['Error', 'Message', 'Channel', 'Agent', 'ApiKey', 'ApiKeyCreated', 'Webhook', 'Delivery', 'Integration', 'IntegrationCreated', 'Member', 'Dm', 'Invite', 'Event', 'SearchHit']
  const lists = ['ChannelList', 'AgentList', 'ApiKeyList', 'WebhookList', 'DeliveryPage', 'IntegrationList', 'MemberList', 'DmList', 'MessagePage', 'EventPage', 'SearchResults']
  for (const name of [...names, ...lists]) {
    const schema = doc.components.schemas[name]
    t.ok(schema, `${name} is a component`)
    t.match(schema?.description, /\w{3,}/, `${name} has a description`)
  }
  t.match(doc.paths['/api/v1/channels']?.get?.responses['200'], {
    description: doc.components.schemas.ChannelList?.description,
    content: { 'application/json': { schema: { $ref: '#/components/schemas/ChannelList' } } },
  })
})

t.test('Error.code is the closed list of src/lib/errors.ts', async (t) => {
  t.same(doc.components.schemas.Error?.properties?.code?.enum, Object.keys(ERROR_CODES))
})

t.test('parameters with a default are optional', async (t) => {
  const withDefault = operations.flatMap((op) => (op.parameters ?? []).filter((p) => p.schema?.default !== undefined).map((p) => ({ op: op.operationId, name: p.name, required: p.required ?? false })))
  t.ok(withDefault.length >= 5, 'the list operations have defaulted limits')
  t.same(
    withDefault.filter((p) => p.required),
    [],
    'none of them is required',
  )
})

t.test('the upload is a binary file part in a non-nullable form', async (t) => {
  const form = doc.paths['/api/v1/channels/{id}/messages']?.post?.requestBody?.content['multipart/form-data']
  t.equal(form?.schema.type, 'object')
  t.equal(form?.schema.properties?.file?.format, 'binary')
  t.equal(form?.schema.properties?.file?.type, 'string')
  t.ok(form?.encoding?.file, 'an encoding entry for the file part')
})

t.test('every response has a real description', async (t) => {
  const vague = operations.flatMap((op) =>
    Object.entries(op.responses)
      .filter(([, r]) => !r.description || r.description === 'Default Response')
      .map(([s]) => `${op.operationId} ${s}`),
  )
  t.same(vague, [])
})

t.test('servers is relative, whatever PORT or PUBLIC_URL', async (t) => {
  t.same(
    doc.servers.map((s) => s.url),
    ['/'],
  )
  const { app } = await build(t, { env: { PUBLIC_URL: 'http://chat.example.test:8080' } })
  const res = await app.inject({ method: 'GET', url: '/openapi.json' })
  t.same(
    res.json<Doc>().servers.map((s) => s.url),
    ['/'],
  )
})

t.test('/docs: the CSP allows the page over plain http and same-origin "Try it out"', async (t) => {
  const { app } = await build(t)
  const res = await app.inject({ method: 'GET', url: '/docs/', headers: { host: 'chat.example.test:8080' } })
  t.equal(res.statusCode, 200)
  t.match(res.body, /swagger-ui/, 'the Swagger UI page')
  const csp = String(res.headers['content-security-policy'])
  t.notMatch(csp, /upgrade-insecure-requests/)
  t.match(csp, /default-src 'self'/, 'requests go to the same origin (relative servers), which default-src allows')
  t.match(csp, /script-src 'self'/)
})
