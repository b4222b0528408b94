// The agent resumes on any transport (issue 26, docs/approvals.md): approve, deny, edit and
// respond each reach the requesting agent with the right final arguments over a real WebSocket
// (also with only=addressed), an SSE stream, a real webhook receiver, an integration and its
// inbox; watchers of the channel see the outcome live; an expiry reaches it the same way.
import t from 'tap'
import { bearer, build, createChannel, addMember, seedWorkspace } from '../support/index.ts'
import { createWebhook, FAST_ENV, receiver, verifySignature } from '../webhooks/helpers.ts'
import { connect, listen } from './helpers.ts'
import { baseUrl, openStream } from './sse-client.ts'

type Json = Record<string, any>

const ARGS = { table: 'orders', older_than_days: 90 }

t.test('every decision reaches the agent with its final arguments: WebSocket, SSE, webhook, integration, inbox', async (t) => {
  const { app, api } = await build(t, { env: FAST_ENV })
  await listen(app)
  const ws = await seedWorkspace(app)
  const agent = ws.agents[0]!
  const ch = await createChannel(api, agent.key, 'db-ops')
  await addMember(api, agent.key, ch.id, ws.member.id)

  const rx = await receiver(t)
  const hook = await createWebhook(api, agent.key, agent.id, rx.url('/hook'), ['approval.decided', 'approval.expired', 'approval.cancelled'])
  const integration = await api({
    method: 'POST',
    url: '/api/v1/integrations',
    headers: bearer(ws.owner.token),
    payload: { name: 'Approvals', platform: 'custom', webhook_url: rx.url('/int'), events: ['approval.decided'], agent_ids: [agent.id] },
  })
  t.equal(integration.statusCode, 201, integration.body)

  const { client: agentWs } = await connect(app, agent.key, { only: 'addressed' })
  const { client: watcher } = await connect(app, ws.member.token)
  const { stream } = await openStream(baseUrl(app), agent.key)
  t.teardown(() => {
    void agentWs.close()
    void watcher.close()
    void stream.close()
  })

  const cases: [string[], Json, Json | null][] = [
    [['approve'], { decision: 'approve' }, ARGS],
    [['approve'], { decision: 'deny', comment: 'not today' }, null],
    [['edit'], { decision: 'edit', arguments: { ...ARGS, older_than_days: 365 } }, { ...ARGS, older_than_days: 365 }],
    [['respond'], { decision: 'respond', comment: 'Archive them instead.' }, null],
  ]
  for (const [choices, body, finalArguments] of cases) {
    const posted = await api({
      method: 'POST',
      url: `/api/v1/channels/${ch.id}/messages`,
      headers: bearer(agent.key),
      payload: { text: 'May I purge old orders?', approval: { action: 'purge', arguments: ARGS, summary: 'Purge orders older than 90 days', choices } },
    })
    t.equal(posted.statusCode, 201)
    const m = posted.json()
    const card = await watcher.type('new_message', (f) => f.message.id === m.id)
    t.equal(card.message.approval.status, 'pending', 'watchers get the request as a message')

    const decided = await api({ method: 'POST', url: `/api/v1/channels/${ch.id}/messages/${m.id}/approval`, headers: bearer(ws.member.token), payload: body })
    t.equal(decided.statusCode, 200)
    const approval = decided.json()
    t.same(approval.final_arguments, finalArguments, `${body.decision}: final arguments`)

    const frame = await agentWs.type('approval_decided', (f) => f.approval.message_id === m.id)
    t.same(frame.approval, approval, `${body.decision}: the agent's WebSocket (only=addressed)`)
    t.equal(frame.channel_id, ch.id)
    const seen = await watcher.type('approval_decided', (f) => f.approval.message_id === m.id)
    t.same(seen.approval, approval, 'the watcher sees the outcome live')
    const sse = await stream.type('approval_decided', (f) => f.approval.message_id === m.id)
    t.same(sse.approval, approval, `${body.decision}: SSE`)

    const [delivery] = await rx.waitFor(1, (r) => r.url === '/hook' && JSON.parse(r.body).payload.approval.message_id === m.id)
    t.ok(verifySignature(hook.secret, delivery!.body, delivery!.headers['x-webhook-signature']), 'signed')
    t.equal(delivery!.headers['x-webhook-event'], 'approval.decided')
    const hookBody = JSON.parse(delivery!.body)
    t.equal(hookBody.event_type, 'approval.decided')
    t.same(hookBody.payload, { approval }, `${body.decision}: webhook`)

    const [int] = await rx.waitFor(1, (r) => r.url === '/int' && JSON.parse(r.body).payload.message_id === m.id)
    t.same(JSON.parse(int!.body).payload, {
      message_id: m.id,
      channel_id: ch.id,
      requester_id: agent.id,
      action: 'purge',
      status: approval.status,
      decision: body.decision,
      final_arguments: finalArguments,
      decided_by: ws.member.id,
      comment: body.comment ?? null,
    })
  }

  const inbox = (await api({ method: 'GET', url: '/api/v1/inbox?limit=100', headers: bearer(agent.key) })).json()
  const items = inbox.items.filter((i: Json) => i.kind === 'approval')
  t.equal(items.length, 4, 'one inbox item per outcome')
  t.same(
    items.map((i: Json) => [i.event_type, i.message, i.reaction, i.approval.decision, i.approval.final_arguments]),
    cases.map(([, body, args]) => ['approval_decided', null, null, body.decision, args]),
  )
  t.equal(inbox.counts.by_kind.approval, 4)
})

t.test('an expiry reaches the agent over the WebSocket and its webhook', async (t) => {
  const { app, api } = await build(t, { env: FAST_ENV })
  await listen(app)
  const ws = await seedWorkspace(app)
  const agent = ws.agents[0]!
  const ch = await createChannel(api, agent.key, 'nightly')
  const rx = await receiver(t)
  await createWebhook(api, agent.key, agent.id, rx.url('/hook'), ['approval.expired'])
  const { client } = await connect(app, agent.key, { only: 'addressed' })
  t.teardown(() => void client.close())
  const posted = await api({
    method: 'POST',
    url: `/api/v1/channels/${ch.id}/messages`,
    headers: bearer(agent.key),
    payload: { text: 'Rotate keys?', approval: { action: 'rotate_keys', summary: 'Rotate keys', expires_in: 1, on_expiry: 'approve' } },
  })
  const m = posted.json()
  const frame = await client.type('approval_expired', (f) => f.approval.message_id === m.id)
  t.same(frame.approval, { ...m.approval, status: 'expired', decision: 'approve', decided_at: m.approval.expires_at, final_arguments: {} })
  const [delivery] = await rx.waitFor(1)
  t.same(JSON.parse(delivery!.body).payload, { approval: frame.approval })
})
