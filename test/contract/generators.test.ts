// Issue 29, item 4: clients generated from the committed openapi/openapi.json by two generators,
// @hey-api/openapi-ts (its fetch client and SDK) and openapi-typescript (+ openapi-fetch), compile
// the agent scenario (channels, a post, a post with a file, history, search, a DM, a webhook, the
// event log) with no cast, under `strict`, and then run it against a real server. hey-api reads one
// request content type per operation: the upload is its own operation, postMessageWithFile.
import { spawnSync } from 'node:child_process'
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { createClient as generateHeyApi } from '@hey-api/openapi-ts'
import openapiTS, { astToString } from 'openapi-typescript'
import t from 'tap'
import ts from 'typescript'
import { build } from '../helper.ts'
import { FAST_ENV, receiver } from '../webhooks/helpers.ts'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const documentPath = path.join(root, 'openapi/openapi.json')

/** What a scenario reports back, to be checked against the server. */
interface Outcome {
  channelId: string
  postedText: string
  fileName: string | undefined
  history: string[]
  hits: string[]
  dmParticipant: string
  webhookSecretPrefix: string
  eventTypes: string[]
}

const BOOTSTRAP_BODY = `{
    primary_agent: { email: 'owner@example.com', password: 'a long enough password', agent_profile: { name: 'lead', display_name: 'Lead' } },
    agents: [{ name: 'helper', display_name: 'Helper' }],
  }`

// hey-api: one function per operation, `{ data, error }` results, the body typed per operation.
const HEY_API_SCENARIO = `import { createClient, createConfig } from './hey/client/index.js'
import { bootstrap, createChannel, createWebhook, listEvents, listMessages, openDm, postMessage, postMessageWithFile, searchMessages } from './hey/sdk.gen.js'
import type { Channel, EventPage, Message } from './hey/types.gen.js'

export async function scenario(baseUrl: string, hookUrl: string) {
  const anonymous = createClient(createConfig({ baseUrl }))
  const boot = await bootstrap({ client: anonymous, throwOnError: true, body: ${BOOTSTRAP_BODY} })
  const helper = boot.data.agents[0]
  if (!helper) throw new Error('no second agent')
  const agent = createClient(createConfig({ baseUrl, auth: boot.data.api_key }))

  const created = await createChannel({ client: agent, throwOnError: true, body: { name: 'generated', topic: 'two generators' } })
  const channel: Channel = created.data
  const path = { id: channel.id }
  const posted = await postMessage({ client: agent, throwOnError: true, path, body: { text: 'hello from hey-api' } })
  const first: Message = posted.data
  const report = new File(['line one\\n'], 'report.txt', { type: 'text/plain' })
  const uploaded = await postMessageWithFile({ client: agent, throwOnError: true, path, body: { text: 'the report', file: report } })
  const history = await listMessages({ client: agent, throwOnError: true, path, query: { limit: 10 } })
  const hits = await searchMessages({ client: agent, throwOnError: true, query: { q: 'hello' } })
  const dm = await openDm({ client: agent, throwOnError: true, body: { participant_id: helper.agent_id } })
  const webhook = await createWebhook({ client: agent, throwOnError: true, path: { id: boot.data.primary_agent.agent_id }, body: { url: hookUrl, events: ['message.created'] } })
  const events = await listEvents({ client: agent, throwOnError: true, query: { limit: 100, wait: 10 } })
  const page: EventPage = events.data
  return {
    channelId: channel.id,
    postedText: first.text,
    fileName: uploaded.data.attachment?.file_name,
    history: history.data.messages.map((m) => m.text),
    hits: hits.data.results.map((h) => h.message.id),
    dmParticipant: dm.data.participant.id,
    webhookSecretPrefix: webhook.data.secret.slice(0, 6),
    eventTypes: page.events.map((e) => e.type),
  }
}
`

// openapi-typescript + openapi-fetch: paths and bodies typed from the same document; the upload
// goes to postMessageWithFile as a FormData built by a body serializer.
const OPENAPI_TS_SCENARIO = `import createClient from 'openapi-fetch'
import type { components, paths } from './ots/schema.js'

type PostWithFile = NonNullable<paths['/api/v1/channels/{id}/messages/upload']['post']['requestBody']>['content']['multipart/form-data']

function form(body: PostWithFile): FormData {
  const data = new FormData()
  if (body.text !== undefined) data.append('text', body.text)
  if (body.file !== undefined) data.append('file', body.file)
  return data
}

function ok<T>(result: { data?: T; response: Response }): T {
  if (result.data === undefined) throw new Error(String(result.response.status))
  return result.data
}

export async function scenario(baseUrl: string, hookUrl: string) {
  const anonymous = createClient<paths>({ baseUrl })
  const boot = ok(await anonymous.POST('/api/v1/bootstrap', { body: ${BOOTSTRAP_BODY} }))
  const helper = boot.agents[0]
  if (!helper) throw new Error('no second agent')
  const agent = createClient<paths>({ baseUrl, headers: { authorization: 'Bearer ' + boot.api_key } })

  const channel: components['schemas']['Channel'] = ok(await agent.POST('/api/v1/channels', { body: { name: 'generated', topic: 'two generators' } }))
  const path = { id: channel.id }
  const first = ok(await agent.POST('/api/v1/channels/{id}/messages', { params: { path }, body: { text: 'hello from openapi-typescript' } }))
  const report = new File(['line one\\n'], 'report.txt', { type: 'text/plain' })
  const uploaded = ok(await agent.POST('/api/v1/channels/{id}/messages/upload', { params: { path }, body: { text: 'the report', file: report }, bodySerializer: form }))
  const history = ok(await agent.GET('/api/v1/channels/{id}/messages', { params: { path, query: { limit: 10 } } }))
  const hits = ok(await agent.GET('/api/v1/messages/search', { params: { query: { q: 'hello' } } }))
  const dm = ok(await agent.POST('/api/v1/dm', { body: { participant_id: helper.agent_id } }))
  const webhook = ok(await agent.POST('/api/v1/agents/{id}/webhooks', { params: { path: { id: boot.primary_agent.agent_id } }, body: { url: hookUrl, events: ['message.created'] } }))
  const page: components['schemas']['EventPage'] = ok(await agent.GET('/api/v1/events', { params: { query: { limit: 100, wait: 10 } } }))
  return {
    channelId: channel.id,
    postedText: first.text,
    fileName: uploaded.attachment?.file_name,
    history: history.messages.map((m) => m.text),
    hits: hits.results.map((h) => h.message.id),
    dmParticipant: dm.participant.id,
    webhookSecretPrefix: webhook.secret.slice(0, 6),
    eventTypes: page.events.map((e) => e.type),
  }
}
`

const TSCONFIG = {
  compilerOptions: {
    strict: true,
    noEmit: true,
    target: 'es2022',
    module: 'nodenext',
    moduleResolution: 'nodenext',
    lib: ['es2023', 'dom', 'dom.iterable'],
    types: [],
    skipLibCheck: true,
    noUncheckedIndexedAccess: true,
  },
  files: ['hey-api.ts', 'openapi-typescript.ts'],
}

/** Casts and non-null assertions: none may be needed. */
const CAST = /\bas\s+(?!const\b)[\w{[(]|<[A-Z]\w*>\s*\w|[\w)\]]!(?=[.[)\s,;])/

t.test('clients generated by hey-api and openapi-typescript compile and run the agent scenario without a cast', async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ams-generators-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  // The scenario files import openapi-fetch and typescript's lib from this checkout.
  await symlink(path.join(root, 'node_modules'), path.join(dir, 'node_modules'), 'dir')
  await writeFile(path.join(dir, 'package.json'), '{ "type": "module", "private": true }\n')

  await generateHeyApi({
    input: documentPath,
    output: { path: path.join(dir, 'hey') },
    plugins: ['@hey-api/typescript', '@hey-api/sdk', '@hey-api/client-fetch'],
    logs: { level: 'silent' },
  })
  // As scripts/sdk-generate.ts does: a `format: binary` property is a file (Blob), not a string.
  const blob = ts.factory.createTypeReferenceNode(ts.factory.createIdentifier('Blob'))
  const ast = await openapiTS(new URL(`file://${documentPath}`), { transform: (schema) => (schema.format === 'binary' ? blob : undefined) })
  await mkdir(path.join(dir, 'ots'))
  await writeFile(path.join(dir, 'ots/schema.d.ts'), astToString(ast))

  await writeFile(path.join(dir, 'hey-api.ts'), HEY_API_SCENARIO)
  await writeFile(path.join(dir, 'openapi-typescript.ts'), OPENAPI_TS_SCENARIO)
  await writeFile(path.join(dir, 'tsconfig.json'), JSON.stringify(TSCONFIG, null, 2))
  for (const source of [HEY_API_SCENARIO, OPENAPI_TS_SCENARIO]) t.notMatch(source, CAST, 'the scenario has no cast and no non-null assertion')

  const tsc = spawnSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', path.join(dir, 'tsconfig.json')], { encoding: 'utf8' })
  t.equal(tsc.status, 0, `tsc --noEmit on both scenarios (strict)${tsc.status === 0 ? '' : `:\n${tsc.stdout}${tsc.stderr}`}`)
  const heyTypes = await readFile(path.join(dir, 'hey/types.gen.ts'), 'utf8')
  t.match(heyTypes, /export type EventChannel = \{/, 'the channel of channel.created/updated is one named type')
  t.match(heyTypes, /file\?: Blob \| File/, "the upload's file part is a Blob or a File")

  for (const [name, file] of [
    ['hey-api', 'hey-api.ts'],
    ['openapi-typescript', 'openapi-typescript.ts'],
  ] as const) {
    await t.test(`${name}: the scenario against a real server`, async (t) => {
      const { app } = await build(t, { env: FAST_ENV })
      const baseUrl = await app.listen({ port: 0, host: '127.0.0.1' })
      const hook = await receiver(t)
      const module = (await import(path.join(dir, file))) as { scenario: (baseUrl: string, hookUrl: string) => Promise<Outcome> }
      const outcome = await module.scenario(baseUrl, hook.url('/events'))
      t.match(outcome.postedText, /^hello from /)
      t.equal(outcome.fileName, 'report.txt')
      t.same(outcome.history, ['the report', outcome.postedText], 'newest first')
      t.equal(outcome.hits.length, 1)
      t.match(outcome.dmParticipant, /^[0-9a-f-]{36}$/)
      t.equal(outcome.webhookSecretPrefix, 'whsec_')
      t.ok(outcome.eventTypes.includes('new_message'), `the event log (${outcome.eventTypes.join(', ')})`)
    })
  }
})
