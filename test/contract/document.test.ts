// The published document as generators and Swagger UI read it: named components, optional
// defaults, a binary upload, the closed error codes, real descriptions, a relative server, and a
// /docs page whose CSP works over plain http by a host name.
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { ERROR_CODES } from '../../src/lib/errors.ts'
import { EMAIL_PATTERN } from '../../src/modules/accounts/rules.ts'
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

// Issue 29, item 4: a document every generator reads the same way.

/** Every schema position below `node`, with its path. */
function* schemas(node: unknown, at: string): Generator<[string, Record<string, unknown>]> {
  if (Array.isArray(node)) {
    for (const [i, item] of node.entries()) yield* schemas(item, `${at}/${i}`)
    return
  }
  if (node === null || typeof node !== 'object') return
  yield [at, node as Record<string, unknown>]
  for (const [key, value] of Object.entries(node)) if (key !== 'examples' && key !== 'example' && key !== 'default') yield* schemas(value, `${at}/${key}`)
}

const raw = JSON.parse(await readFile(file, 'utf8')) as {
  components: { schemas: Record<string, unknown> }
  paths: Record<string, Record<string, { operationId?: string; requestBody?: { content: Record<string, unknown> }; responses: Record<string, { content?: Record<string, { schema: unknown }> }> }>>
  webhooks: Record<string, { post: { requestBody: { content: Record<string, { schema: unknown }> } } }>
}

t.test('string enums are enums: no union of literals, no const', async (t) => {
  const literal = (s: unknown) => typeof s === 'object' && s !== null && (('const' in s && Object.keys(s).length <= 2) || ('enum' in s && Object.keys(s).length <= 2))
  const unions: string[] = []
  const consts: string[] = []
  for (const [at, schema] of schemas(raw, '')) {
    for (const key of ['anyOf', 'oneOf']) {
      const members = schema[key]
      if (Array.isArray(members) && members.filter(literal).length >= 2) unions.push(at)
    }
    if ('const' in schema && !at.includes('/properties/const')) consts.push(at)
  }
  t.same(unions, [], 'no anyOf/oneOf of single literals')
  t.same(consts, [], 'no const')
  t.same((raw.components.schemas.Message as { properties: Record<string, unknown> }).properties.author_type, { description: '`AGENT` or `HUMAN`.', type: 'string', enum: ['AGENT', 'HUMAN'] })
})

t.test('every object of a component, a response or a delivery body is a named component', async (t) => {
  const isInlineObject = (s: Record<string, unknown>) => s.type === 'object' && typeof s.properties === 'object' && s.properties !== null && Object.keys(s.properties).length > 0
  const inline: string[] = []
  for (const [name, component] of Object.entries(raw.components.schemas)) {
    for (const [at, schema] of schemas(component, name)) if (at !== name && isInlineObject(schema)) inline.push(at)
  }
  for (const [p, operations] of Object.entries(raw.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      for (const [status, response] of Object.entries(operation.responses)) {
        for (const media of Object.values(response.content ?? {})) for (const [at, schema] of schemas(media.schema, `${method} ${p} ${status}`)) if (isInlineObject(schema)) inline.push(at)
      }
    }
  }
  for (const [name, webhook] of Object.entries(raw.webhooks)) {
    for (const media of Object.values(webhook.post.requestBody.content)) for (const [at, schema] of schemas(media.schema, name)) if (isInlineObject(schema)) inline.push(at)
  }
  t.same(inline, [])
  const event = raw.components.schemas.Event as { anyOf: { $ref: string }[] }
  t.ok(
    event.anyOf.every((v) => v.$ref.startsWith('#/components/schemas/Event')),
    'each event variant is a component',
  )
  for (const variant of ['EventChannelCreated', 'EventChannelUpdated']) {
    t.same((raw.components.schemas[variant] as { properties: { channel: unknown } }).properties.channel, { $ref: '#/components/schemas/EventChannel' }, `${variant}.channel is the one EventChannel`)
  }
})

t.test('the upload has an operation of its own, multipart only; postMessage keeps both bodies', async (t) => {
  const upload = raw.paths['/api/v1/channels/{id}/messages/upload']?.post
  t.equal(upload?.operationId, 'postMessageWithFile')
  t.same(Object.keys(upload?.requestBody?.content ?? {}), ['multipart/form-data'])
  t.same(Object.keys(raw.paths['/api/v1/channels/{id}/messages']?.post?.requestBody?.content ?? {}).sort(), ['application/json', 'multipart/form-data'])
})

t.test('e-mail fields carry the server rule as a pattern, not format: email', async (t) => {
  const emails = [...schemas(raw.paths, '')].filter(([at]) => /\/properties\/email$/.test(at))
  for (const [at, schema] of emails) t.equal(schema.format, undefined, `${at}: no format`)
  const ruled = emails.filter(([, schema]) => schema.pattern !== undefined)
  t.ok(ruled.length >= 3, 'register, bootstrap, invites (login and invite acceptance take any text: a wrong one is 401 or 400 INVITE_EMAIL_MISMATCH)')
  for (const [at, schema] of ruled) t.equal(schema.pattern, EMAIL_PATTERN, `${at}: the server's rule`)
})
