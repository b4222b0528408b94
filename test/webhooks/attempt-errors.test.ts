// An attempt that fails for a reason of ours, not the receiver's (here a statement PostgreSQL
// refuses; on a loaded machine, a pooled connection that did not come in time): the delivery is
// handed back and tried again about a second later with no attempt counted, instead of waiting out
// its claim (a minute here), and the endpoint's slot goes on to the next deliveries.
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { bearer, build, createChannelId, expectStatus, seedWorkspace } from '../support/index.ts'
import { createWebhook, eventually, FAST_ENV, receiver } from './helpers.ts'

t.test('a delivery whose attempt fails on our side is tried again shortly, uncounted', async (t) => {
  const { app, api } = await build(t, { env: { ...FAST_ENV, WEBHOOK_CLAIM_TIMEOUT_MS: '60000' } })
  const ws = await seedWorkspace(app)
  const poster = ws.primary
  const subscriber = ws.agents[0]!
  const channelId = await createChannelId(api, poster.key, 'attempt-errors', [subscriber.id])
  const rx = await receiver(t)
  await createWebhook(api, subscriber.key, subscriber.id, rx.url('/hook'))

  // The attempt's statement reads this column: without it every attempt fails before it begins.
  await app.db.pool.query('ALTER TABLE webhooks RENAME COLUMN disabled_reason TO disabled_reason_hidden')
  const texts = ['first', 'second', 'third']
  for (const text of texts) {
    expectStatus(await api({ method: 'POST', url: `/api/v1/channels/${channelId}/messages`, headers: bearer(poster.key), payload: { text } }), 201, 'post')
  }
  await eventually(async () => (await app.db.pool.query("SELECT 1 FROM deliveries WHERE status = 'pending'")).rowCount === texts.length, 'the deliveries planned')
  // Several rounds of claims and failed attempts (the scheduler polls every 50 ms).
  await sleep(1_500)
  // A look can fall inside an attempt (claimed, due at the end of its claim, not yet handed back),
  // so the claim of every delivery is read until one look finds none of them mid-attempt; without
  // the hand-back each stays due at the end of its claim and this times out.
  let last: { attempts: number; due_in_ms: number }[] = []
  const rows = await eventually(async () => {
    last = (
      await app.db.pool.query<{ attempts: number; due_in_ms: number }>("SELECT attempts, extract(epoch FROM next_attempt_at - now()) * 1000 AS due_in_ms FROM deliveries WHERE status = 'pending'")
    ).rows
    return last.length === texts.length && last.every((r) => r.due_in_ms <= 1_100) && last
  }, 'every delivery due again within about a second').catch((error: unknown) => {
    throw new Error(`${(error as Error).message}, not at the end of its minute-long claim (${last.map((r) => Math.round(r.due_in_ms)).join(', ')} ms)`)
  })
  t.same(
    rows.map((r) => r.attempts),
    [0, 0, 0],
    'no attempt counted',
  )
  t.pass('each is due again within about a second, not at the end of its minute-long claim')

  await app.db.pool.query('ALTER TABLE webhooks RENAME COLUMN disabled_reason_hidden TO disabled_reason')
  const deadline = Date.now() + 15_000
  while (rx.requests.length < texts.length && Date.now() < deadline) await sleep(25)
  t.same(
    rx.requests.map((r) => (JSON.parse(r.body) as { payload: { message: { text: string } } }).payload.message.text).sort(),
    [...texts].sort(),
    'every delivery arrives once the fault is gone, well within the claim',
  )
  // The receiver answers before the server records the outcome.
  const outcomes = async (): Promise<string[][]> =>
    (await app.db.pool.query<{ status: string; attempts: number }>('SELECT status, attempts FROM deliveries')).rows.map((r) => [r.status, String(r.attempts)])
  await eventually(async () => (await outcomes()).every(([status]) => status !== 'pending'), 'the outcomes recorded')
  t.same(
    await outcomes(),
    texts.map(() => ['succeeded', '1']),
    'each succeeded at its first counted attempt',
  )
})
