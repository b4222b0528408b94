// Agent webhook deliveries against real HTTP receivers: signature and body byte for byte,
// history, retries on the short test schedule, failure then redelivery, disabling an endpoint
// that keeps failing, timeouts, redirects, and the SSRF check at connection time.
import { randomUUID } from 'node:crypto'
import t from 'tap'
import { uuidv7 } from '../../src/lib/ids.ts'
import { build } from '../helper.ts'
import { Receiver, createWebhook, eventually, FAST_ENV, receiver, verifySignature, verifyTimestamped } from './helpers.ts'
import { bearer, createChannelId, post, seedWorkspace, UUID_RE } from '../support/index.ts'

t.test('message.created reaches the agent webhook, signed, and is recorded', async (t) => {
  const { app, api } = await build(t, { env: FAST_ENV })
  const ws = await seedWorkspace(app)
  const agent = ws.agents[0]!
  const rx = await receiver(t)
  const hook = await createWebhook(api, agent.key, agent.id, rx.url('/in?x=1'))

  // A channel the agent is not in: nothing for it. Then one it belongs to.
  const other = await createChannelId(api, ws.agents[1]!.key, 'elsewhere')
  await post(api, ws.agents[1]!.key, other, 'not for agent-1')
  const channel = await createChannelId(api, ws.agents[1]!.key, 'shared', [agent.id])
  const message = await post(api, ws.agents[1]!.key, channel, 'hello webhook ✓')

  const [req] = await rx.waitFor(1)
  t.equal(req!.method, 'POST')
  t.equal(req!.url, '/in?x=1')
  t.equal(req!.headers['content-type'], 'application/json')
  t.ok(verifySignature(hook.secret, req!.body, req!.headers['x-webhook-signature']), 'X-Webhook-Signature is sha256=<hex HMAC of the raw body>')
  t.notOk(verifySignature(hook.secret + 'x', req!.body, req!.headers['x-webhook-signature']), 'another secret does not verify')
  const ts = req!.headers['x-webhook-timestamp'] as string
  t.ok(Math.abs(Number(ts) - Date.now() / 1000) < 300, 'timestamp is now (Unix seconds)')
  t.ok(verifyTimestamped(hook.secret, ts, req!.body, req!.headers['x-webhook-timestamp-signature']), 'timestamped signature over "<ts>.<body>"')
  t.notOk(verifyTimestamped(hook.secret, String(Number(ts) + 1), req!.body, req!.headers['x-webhook-timestamp-signature']), 'a changed timestamp does not verify')
  t.equal(req!.headers['x-webhook-event'], 'message.created')
  t.equal(req!.headers['x-webhook-id'], hook.id)
  t.equal(req!.headers['x-webhook-attempt'], '1')
  t.match(req!.headers['x-webhook-delivery-id'], UUID_RE)

  const body = JSON.parse(req!.body)
  t.same(Object.keys(body), ['event_id', 'event_type', 'occurred_at', 'webhook_id', 'agent_id', 'payload'])
  t.equal(body.event_type, 'message.created')
  t.equal(body.event_id, req!.headers['x-webhook-event-id'])
  t.equal(body.webhook_id, hook.id)
  t.equal(body.agent_id, agent.id)
  t.match(body.occurred_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
  t.same(body.payload, { message }, 'payload carries the same message object as the REST API')

  const page = await eventually(async () => {
    const res = await api({ method: 'GET', url: `/api/v1/agents/${agent.id}/webhooks/${hook.id}/deliveries`, headers: bearer(agent.key) })
    const json = res.json()
    return json.deliveries[0]?.status === 'succeeded' ? json : null
  }, 'the delivery to be recorded as succeeded')
  t.equal(page.deliveries.length, 1, 'only the channel the agent belongs to')
  const d = page.deliveries[0]
  t.equal(d.id, req!.headers['x-webhook-delivery-id'])
  t.equal(d.event_id, body.event_id)
  t.equal(d.event_type, 'message.created')
  t.equal(d.attempts, 1)
  t.equal(d.last_status_code, 200)
  t.equal(d.last_error, null)
  t.type(d.last_duration_ms, 'number')
  t.equal(d.next_attempt_at, null)
  t.ok(d.completed_at)
  t.equal(page.has_more, false)
  t.equal(rx.requests.length, 1)

  // The owner sees the same history.
  const asOwner = await api({ method: 'GET', url: `/api/v1/agents/${agent.id}/webhooks/${hook.id}/deliveries`, headers: bearer(ws.owner.token) })
  t.equal(asOwner.statusCode, 200)
  t.equal(asOwner.json().deliveries[0].id, d.id)

  // Every outbox event was planned, the one of the other channel included.
  const unplanned = await app.db.pool.query('SELECT count(*)::int AS n FROM outbox_events WHERE planned_at IS NULL')
  t.equal(unplanned.rows[0].n, 0)
})

t.test('history is newest first and paginated', async (t) => {
  const { app, api } = await build(t, { env: FAST_ENV })
  const ws = await seedWorkspace(app)
  const agent = ws.agents[0]!
  const rx = await receiver(t)
  const hook = await createWebhook(api, agent.key, agent.id, rx.url())
  const channel = await createChannelId(api, agent.key, 'busy')
  for (let i = 0; i < 5; i++) await post(api, agent.key, channel, `m${i}`)
  await rx.waitFor(5)
  const url = `/api/v1/agents/${agent.id}/webhooks/${hook.id}/deliveries`
  const first = await api({ method: 'GET', url: `${url}?limit=2`, headers: bearer(agent.key) })
  t.equal(first.statusCode, 200)
  t.equal(first.json().deliveries.length, 2)
  t.equal(first.json().has_more, true)
  const seen: string[] = first.json().deliveries.map((d: { id: string }) => d.id)
  let before = first.json().next_before
  for (;;) {
    const res = await api({ method: 'GET', url: `${url}?limit=2&before=${before}`, headers: bearer(agent.key) })
    seen.push(...res.json().deliveries.map((d: { id: string }) => d.id))
    if (!res.json().has_more) break
    before = res.json().next_before
  }
  t.equal(seen.length, 5)
  t.same(seen, [...seen].sort().reverse(), 'newest first')
  const texts = (await Promise.all(seen.map((id) => app.db.prisma.delivery.findUnique({ where: { id } })))).map((d) => JSON.parse(d!.body).payload.message.text)
  t.same(texts, ['m4', 'm3', 'm2', 'm1', 'm0'])
  const bad = await api({ method: 'GET', url: `${url}?limit=101`, headers: bearer(agent.key) })
  t.equal(bad.statusCode, 400)
})

t.test('a receiver that is down gets retries on the schedule, then success is recorded', async (t) => {
  const { app, api } = await build(t, { env: FAST_ENV })
  const ws = await seedWorkspace(app)
  const agent = ws.agents[0]!
  let release!: () => void
  const held = new Promise<void>((resolve) => (release = resolve))
  const rx = await receiver(t, async (_req, i) => {
    if (i === 0) return 503
    if (i === 1) {
      await held
      return 500
    }
    return 204
  })
  const hook = await createWebhook(api, agent.key, agent.id, rx.url())
  const channel = await createChannelId(api, agent.key, 'retry')
  await post(api, agent.key, channel, 'try again')

  await rx.waitFor(1)
  const url = `/api/v1/agents/${agent.id}/webhooks/${hook.id}/deliveries`
  // While the second attempt is held by the receiver, the first one's outcome is visible.
  const afterFirst = await eventually(async () => {
    const d = (await api({ method: 'GET', url, headers: bearer(agent.key) })).json().deliveries[0]
    return d?.last_status_code === 503 ? d : null
  }, 'the first failure to be recorded')
  t.equal(afterFirst.status, 'pending')
  t.match(afterFirst.last_error, /^HTTP 503: receiver says 503/)
  t.ok(afterFirst.next_attempt_at, 'a next attempt is scheduled')
  // The endpoint's failure streak is recorded by the statement after the delivery's (repo.recordFailure).
  const webhook = await eventually(async () => {
    const w = (await api({ method: 'GET', url: `/api/v1/agents/${agent.id}/webhooks/${hook.id}`, headers: bearer(agent.key) })).json()
    return w.consecutive_failures === 1 ? w : null
  }, 'the failure streak to be recorded')
  t.equal(webhook.consecutive_failures, 1)
  t.ok(webhook.failing_since)
  release()

  const reqs = await rx.waitFor(3)
  t.same(
    reqs.map((r) => r.headers['x-webhook-attempt']),
    ['1', '2', '3'],
  )
  t.equal(new Set(reqs.map((r) => r.headers['x-webhook-delivery-id'])).size, 1, 'the same delivery id on every attempt')
  t.equal(new Set(reqs.map((r) => r.body)).size, 1, 'the same bytes on every attempt')
  for (const r of reqs) t.ok(verifySignature(hook.secret, r.body, r.headers['x-webhook-signature']))

  const done = await eventually(async () => {
    const d = (await api({ method: 'GET', url, headers: bearer(agent.key) })).json().deliveries[0]
    return d?.status === 'succeeded' ? d : null
  }, 'success')
  t.equal(done.attempts, 3)
  t.equal(done.last_status_code, 204)
  t.equal(done.last_error, null)
  const healed = (await api({ method: 'GET', url: `/api/v1/agents/${agent.id}/webhooks/${hook.id}`, headers: bearer(agent.key) })).json()
  t.equal(healed.consecutive_failures, 0)
  t.equal(healed.failing_since, null)
})

t.test('every attempt failing marks the delivery failed; redeliver sends it again', async (t) => {
  const { app, api } = await build(t, { env: { ...FAST_ENV, WEBHOOK_RETRY_SCHEDULE: '0,0,0' } })
  const ws = await seedWorkspace(app)
  const agent = ws.agents[0]!
  let status = 500
  const rx = await receiver(t, () => status)
  const hook = await createWebhook(api, agent.key, agent.id, rx.url())
  const channel = await createChannelId(api, agent.key, 'fail')
  await post(api, agent.key, channel, 'doomed')
  const url = `/api/v1/agents/${agent.id}/webhooks/${hook.id}/deliveries`
  const failed = await eventually(async () => {
    const d = (await api({ method: 'GET', url, headers: bearer(agent.key) })).json().deliveries[0]
    return d?.status === 'failed' ? d : null
  }, 'the delivery to fail')
  t.equal(failed.attempts, 4, 'the first attempt and one per schedule entry')
  t.equal(failed.last_status_code, 500)
  t.equal(failed.next_attempt_at, null)
  t.ok(failed.completed_at)
  t.equal(rx.requests.length, 4)

  status = 200
  const res = await api({ method: 'POST', url: `${url.replace('/deliveries', '')}/deliveries/${failed.id}/redeliver`, headers: bearer(agent.key) })
  t.equal(res.statusCode, 202)
  t.equal(res.json().status, 'pending')
  const [, , , , again] = await rx.waitFor(5)
  t.equal(again!.headers['x-webhook-delivery-id'], failed.id, 'same delivery id')
  t.equal(again!.body, rx.requests[0]!.body, 'same body')
  const ok = await eventually(async () => {
    const d = (await api({ method: 'GET', url, headers: bearer(agent.key) })).json().deliveries[0]
    return d?.status === 'succeeded' ? d : null
  }, 'the redelivery to succeed')
  t.equal(ok.attempts, 5)

  const unknown = await api({ method: 'POST', url: `${url}/${randomUUID()}/redeliver`, headers: bearer(agent.key) })
  t.equal(unknown.statusCode, 404)
  const stranger = await api({ method: 'POST', url: `${url}/${failed.id}/redeliver`, headers: bearer(ws.agents[1]!.key) })
  t.equal(stranger.statusCode, 404)
})

t.test('an endpoint that keeps failing is disabled, with the reason; re-enabling resumes', async (t) => {
  const env = { ...FAST_ENV, WEBHOOK_RETRY_SCHEDULE: '0,0,0,0,0', WEBHOOK_DISABLE_AFTER_SECONDS: '0', WEBHOOK_DISABLE_MIN_FAILURES: '3' }
  const { app, api } = await build(t, { env })
  const ws = await seedWorkspace(app)
  const agent = ws.agents[0]!
  let status = 500
  const rx = await receiver(t, () => status)
  const hook = await createWebhook(api, agent.key, agent.id, rx.url())
  const channel = await createChannelId(api, agent.key, 'flaky')
  await post(api, agent.key, channel, 'one')
  const hookUrl = `/api/v1/agents/${agent.id}/webhooks/${hook.id}`
  const disabled = await eventually(async () => {
    const w = (await api({ method: 'GET', url: hookUrl, headers: bearer(ws.owner.token) })).json()
    return w.active === false ? w : null
  }, 'the webhook to be disabled')
  t.ok(disabled.disabled_at)
  t.match(disabled.disabled_reason, /^disabled after 3 consecutive failed deliveries since .*Z; last error: HTTP 500/)
  t.equal(disabled.consecutive_failures, 3)
  const d = await eventually(async () => {
    const x = (await api({ method: 'GET', url: `${hookUrl}/deliveries`, headers: bearer(agent.key) })).json().deliveries[0]
    return x?.status === 'failed' ? x : null
  }, 'the pending delivery to fail')
  t.equal(d.attempts, 3, 'no attempt once the endpoint is disabled')
  t.match(d.last_error, /^not sent: the webhook is disabled/)
  t.equal(rx.requests.length, 3)

  // While disabled: nothing is planned for it, and redelivery is refused.
  await post(api, agent.key, channel, 'two')
  await eventually(async () => (await app.db.pool.query('SELECT count(*)::int AS n FROM outbox_events WHERE planned_at IS NULL')).rows[0].n === 0, 'planning')
  t.equal((await api({ method: 'GET', url: `${hookUrl}/deliveries`, headers: bearer(agent.key) })).json().deliveries.length, 1)
  const refused = await api({ method: 'POST', url: `${hookUrl}/deliveries/${d.id}/redeliver`, headers: bearer(agent.key) })
  t.equal(refused.statusCode, 409)
  t.equal(refused.json().code, 'CONFLICT')

  status = 200
  const enabled = await api({ method: 'PATCH', url: hookUrl, headers: bearer(agent.key), payload: { active: true } })
  t.equal(enabled.statusCode, 200)
  t.match(enabled.json(), { active: true, disabled_at: null, disabled_reason: null, consecutive_failures: 0, failing_since: null })
  await post(api, agent.key, channel, 'three')
  const [, , , fourth] = await rx.waitFor(4)
  t.equal(JSON.parse(fourth!.body).payload.message.text, 'three')
})

t.test('timeouts, redirects and connection-time address checks', async (t) => {
  const { app, api } = await build(t, { env: { ...FAST_ENV, WEBHOOK_ALLOW_PRIVATE: 'false', WEBHOOK_ALLOW_HOSTS: '127.0.0.2', WEBHOOK_TIMEOUT_MS: '300' } })
  const ws = await seedWorkspace(app)
  const agent = ws.agents[0]!
  let hang!: () => void
  const hanging = new Promise<void>((resolve) => (hang = resolve))
  t.teardown(() => hang())
  // On 127.0.0.2, which the allow-list (WEBHOOK_ALLOW_HOSTS) lets through.
  const slow = await new Receiver().listen(t, 0, '127.0.0.2')
  slow.responder = async () => {
    await hanging
    return 200
  }
  const redirect = await new Receiver().listen(t, 0, '127.0.0.2')
  redirect.responder = () => 302
  const target = await receiver(t)
  // Registered behind the API's back (the API refuses these URLs without WEBHOOK_ALLOW_PRIVATE),
  // as if DNS had changed after registration: the connection itself must refuse them.
  const insert = (url: string) => app.db.prisma.webhook.create({ data: { id: uuidv7(), agentId: agent.id, url, events: ['message.created'], secret: 'whsec_test' } })
  const byName = await insert(`http://localhost:${target.port}/hook`)
  const byIp = await insert(`http://127.0.0.1:${target.port}/hook`)
  const mapped = await insert(`http://[::ffff:127.0.0.1]:${target.port}/hook`)
  const slowHook = await insert(`http://127.0.0.2:${slow.port}/hook`)
  const redirectHook = await insert(`http://127.0.0.2:${redirect.port}/hook`)

  const channel = await createChannelId(api, agent.key, 'guarded')
  await post(api, agent.key, channel, 'who gets this?')
  const outcome = async (webhookId: string) =>
    eventually(async () => {
      const d = await app.db.prisma.delivery.findFirst({ where: { webhookId } })
      return d?.lastError ? d : null
    }, 'a failed attempt')

  const viaName = await outcome(byName.id)
  t.equal(viaName.lastError, 'refused: the host localhost is not a public name')
  t.match((await outcome(byIp.id)).lastError, /^refused: .*127\.0\.0\.1/)
  t.match((await outcome(mapped.id)).lastError, /^refused: /)
  t.equal(target.requests.length, 0, 'no private address was reached')

  const timedOut = await outcome(slowHook.id)
  t.match(timedOut.lastError, /timed out after 300 ms/)
  t.equal(timedOut.lastStatusCode, null)
  const redirected = await outcome(redirectHook.id)
  t.equal(redirected.lastStatusCode, 302)
  t.match(redirected.lastError, /^HTTP 302 \(redirects are not followed\)/)
})
