// The whole agent scenario through the client generated from the committed document
// (src/sdk/schema.d.ts + openapi-fetch, as src/sdk/client.ts wires them), over real HTTP. It is
// type-checked by `npm run build` and contains no cast: a change to the API that breaks generated
// clients fails here (types) or at run time (behaviour).
import t from 'tap'
import { createApiClient, type Schemas } from '../../src/sdk/client.ts'
import { build } from '../helper.ts'
import { eventually, FAST_ENV, receiver } from '../webhooks/helpers.ts'

/** The data of a successful call, or a failure that names the status and the error body. */
function ok<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.data === undefined) throw new Error(`${result.response.status} ${JSON.stringify(result.error)}`)
  return result.data
}

t.test('a generated client runs the agent scenario without a cast', async (t) => {
  const { app } = await build(t, { env: FAST_ENV })
  const baseUrl = await app.listen({ port: 0, host: '127.0.0.1' })
  const hook = await receiver(t)

  // Bootstrap, without credentials.
  const anonymous = createApiClient({ baseUrl })
  const boot = ok(
    await anonymous.POST('/api/v1/bootstrap', {
      body: {
        primary_agent: { email: 'owner@example.com', password: 'a long enough password', agent_profile: { name: 'lead', display_name: 'Lead' } },
        agents: [{ name: 'helper', display_name: 'Helper' }],
      },
    }),
  )
  const helper = boot.agents[0]
  if (!helper) throw new Error('bootstrap returned no second agent')
  const agent = createApiClient({ baseUrl, token: boot.api_key })
  const owner = createApiClient({ baseUrl, token: () => boot.token })

  // A channel, a JSON post and a file post.
  const channel: Schemas['Channel'] = ok(await agent.POST('/api/v1/channels', { body: { name: 'contract scenario', topic: 'generated clients' } }))
  t.equal(channel.name, 'contract scenario')
  const path = { id: channel.id }
  const first = ok(await agent.POST('/api/v1/channels/{id}/messages', { params: { path }, body: { text: 'hello from a generated client' } }))
  t.equal(first.text, 'hello from a generated client')
  const report = new File(['line one\nline two\n'], 'report.txt', { type: 'text/plain' })
  const withFile = ok(await agent.POST('/api/v1/channels/{id}/messages', { params: { path }, body: { text: 'the report', file: report } }))
  t.match(withFile.attachment, { file_name: 'report.txt', content_type: 'text/plain', size: report.size })

  // Page the messages back, one per page.
  const page1 = ok(await agent.GET('/api/v1/channels/{id}/messages', { params: { path, query: { limit: 1 } } }))
  t.same(
    page1.messages.map((m) => m.id),
    [withFile.id],
  )
  t.equal(page1.has_more, true)
  const before = page1.next_before ?? undefined
  const page2 = ok(await agent.GET('/api/v1/channels/{id}/messages', { params: { path, query: { limit: 1, before } } }))
  t.same(
    page2.messages.map((m) => m.id),
    [first.id],
  )
  const defaults = ok(await agent.GET('/api/v1/channels/{id}/messages', { params: { path } }))
  t.equal(defaults.messages.length, 2, 'limit may be left out')

  // Search, as the agent and as the owner (who reads every regular channel).
  const hits = ok(await agent.GET('/api/v1/messages/search', { params: { query: { q: 'generated' } } }))
  t.same(
    hits.results.map((h) => h.message.id),
    [first.id],
  )
  const ownerHits = ok(await owner.GET('/api/v1/messages/search', { params: { query: { q: 'report' } } }))
  t.same(
    ownerHits.results.map((h) => h.id),
    [withFile.id],
  )

  // A DM with the other agent.
  const dm: Schemas['Dm'] = ok(await agent.POST('/api/v1/dm', { body: { participant_id: helper.agent_id } }))
  t.equal(dm.participant.id, helper.agent_id)
  ok(await agent.POST('/api/v1/channels/{id}/messages', { params: { path: { id: dm.id } }, body: { text: 'just between us' } }))

  // A webhook and its deliveries.
  const agentPath = { id: boot.primary_agent.agent_id }
  const webhook = ok(await agent.POST('/api/v1/agents/{id}/webhooks', { params: { path: agentPath }, body: { url: hook.url('/events'), events: ['message.created'] } }))
  t.match(webhook.secret, /^whsec_/)
  const sent = ok(await agent.POST('/api/v1/channels/{id}/messages', { params: { path }, body: { text: 'for the webhook' } }))
  await hook.waitFor(1, (r) => r.body.includes(sent.id))
  const webhookPath = { id: agentPath.id, webhook_id: webhook.id }
  const deliveries = await eventually(async () => {
    const page = ok(await agent.GET('/api/v1/agents/{id}/webhooks/{webhook_id}/deliveries', { params: { path: webhookPath } }))
    return page.deliveries.some((d) => d.status === 'succeeded') ? page : null
  }, 'a succeeded delivery')
  t.match(deliveries.deliveries[0], { event_type: 'message.created', status: 'succeeded', last_status_code: 200 })

  // An integration (a LangGraph one) posting inbound with its own key.
  const integration: Schemas['IntegrationCreated'] = ok(
    await owner.POST('/api/v1/integrations', { body: { name: 'graph', platform: 'langgraph', webhook_url: hook.url('/integration'), agent_ids: [agentPath.id] } }),
  )
  t.equal(integration.platform, 'langgraph')
  const patched = ok(await owner.PATCH('/api/v1/integrations/{id}', { params: { path: { id: integration.id } }, body: { platform: 'openclaw' } }))
  t.equal(patched.platform, 'openclaw')
  const inbound = createApiClient({ baseUrl, token: integration.api_key })
  const posted = ok(
    await inbound.POST('/api/v1/integrations/{id}/inbound', { params: { path: { id: integration.id } }, body: { channel_id: channel.id, agent_id: agentPath.id, text: 'from the graph' } }),
  )
  t.match(posted, { channel_id: channel.id, author_id: agentPath.id, text: 'from the graph' })

  // Errors are typed too: the closed list of codes.
  const missing = await agent.GET('/api/v1/channels/{id}', { params: { path: { id: '00000000-0000-4000-8000-000000000000' } } })
  const code: Schemas['Error']['code'] | undefined = missing.error?.code
  t.equal(code, 'NOT_FOUND')
  t.equal(missing.response.status, 404)
})
