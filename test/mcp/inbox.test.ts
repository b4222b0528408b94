// The inbox over MCP (docs/mcp.md): check_inbox (counts only), read_inbox, wait_for_inbox and
// ack_inbox, each with an output schema and a bounded answer. An agent offline for long enough that
// the event log no longer reaches its cursor catches up with one read_inbox, counts first.
import t from 'tap'
import { bearer, createChannelId, untilPlanned } from '../support/index.ts'
import { openDm, postIn } from '../realtime/addressed-scenario.ts'
import { call, connectClient, setup, structured, textOf } from './helpers.ts'

t.test('offline for an hour: one read_inbox catches up, counts first; acknowledged items never return', async (t) => {
  // A short event log (100 events), so that the agent's saved cursor falls out of it.
  const ctx = await setup(t, { env: { EVENT_RETENTION: '100' } })
  const me = ctx.ws.agents[0]!
  const human = ctx.ws.owner
  const room = await createChannelId(ctx.api, human.token, 'busy', [me.id, ctx.ws.primary.id])
  const dm = await openDm(ctx.api, ctx.ws.primary.key, me.id)
  const { client } = await connectClient(t, ctx.base, me.key)
  const saved = structured(await call(client, 'wait_for_events', { timeout_seconds: 0 })).next_cursor as string

  // While the agent is away: 150 messages of chatter, among them what concerns it.
  const addressed: string[] = []
  for (let i = 0; i < 150; i++) {
    if (i % 50 === 10) addressed.push((await postIn(ctx.api, human.token, room, `@${me.name} question ${i}`)).id)
    else if (i % 50 === 30) addressed.push((await postIn(ctx.api, ctx.ws.primary.key, dm, `direct ${i}`)).id)
    else await postIn(ctx.api, human.token, room, `chatter ${i}`)
  }
  await untilPlanned(ctx.app)

  const lost = structured(await call(client, 'wait_for_events', { cursor: saved, only: 'addressed', timeout_seconds: 0 }))
  t.equal(lost.resync_required, true, 'the event log no longer reaches the saved cursor')

  const checked = await call(client, 'check_inbox', {})
  t.same(structured(checked), {
    counts: {
      total: 6,
      by_kind: { mention: 3, dm: 3, thread_reply: 0, reaction: 0, approval: 0, stop: 0 },
      by_channel: structured(checked).counts.by_channel,
    },
  })
  t.same(
    structured(checked)
      .counts.by_channel.map((c: any) => [c.channel_id, c.count])
      .sort(),
    [
      [room, 3],
      [dm, 3],
    ].sort(),
  )
  t.match(textOf(checked), /^Inbox: 6 unacknowledged \(mention 3, dm 3\)/)

  const read = await call(client, 'read_inbox', { limit: 50 })
  const page = structured(read)
  t.same(Object.keys(page), ['counts', 'items', 'next_cursor', 'has_more'], 'counts come first')
  t.match(textOf(read), /^Inbox: 6 unacknowledged/, 'the text too starts with the counts')
  t.same(
    page.items.map((i: any) => i.message.id),
    addressed,
    'everything that concerns it, oldest first, nothing else',
  )
  t.equal(page.has_more, false)

  const acked = await call(client, 'ack_inbox', { up_to: page.next_cursor })
  t.equal(structured(acked).acknowledged, 6)
  t.equal(structured(acked).counts.total, 0)
  t.same(structured(await call(client, 'read_inbox', {})).items, [], 'acknowledged items never come back')
  const empty = await call(client, 'wait_for_inbox', { timeout_seconds: 0 })
  t.same(structured(empty).items, [])
  t.match(textOf(empty), /^Nothing arrived\. Inbox: nothing unacknowledged\./)
})

t.test('bounded answers and bad arguments', async (t) => {
  const ctx = await setup(t, { env: { MAX_MESSAGE_LENGTH: '20000' } })
  const me = ctx.ws.agents[0]!
  const dm = await openDm(ctx.api, ctx.ws.primary.key, me.id)
  const long = 'x'.repeat(15_000)
  for (let i = 0; i < 8; i++) await postIn(ctx.api, ctx.ws.primary.key, dm, `${i} ${long}`)
  await untilPlanned(ctx.app)
  const { client } = await connectClient(t, ctx.base, me.key)

  const page = structured(await call(client, 'read_inbox', { limit: 50 }))
  t.ok(page.items.length < 8, 'the page stops at the size budget')
  t.equal(page.has_more, true)
  t.ok(
    page.items.every((i: any) => i.message.text_truncated === true && i.message.text.length < 8_100),
    'texts are cut',
  )
  t.equal(page.counts.total, 8)
  const rest = structured(await call(client, 'read_inbox', { after: page.next_cursor }))
  t.equal(page.items.length + rest.items.length, 8, 'the next page goes on from the cursor')

  for (const args of [{}, { up_to: page.next_cursor, ids: [page.next_cursor] }, { ids: [] }, { up_to: 'nope' }]) {
    const res = await call(client, 'ack_inbox', args)
    t.equal(res.isError, true, JSON.stringify(args))
    t.equal(structured(res).code, 'VALIDATION_ERROR')
  }
  const bad = await call(client, 'read_inbox', { limit: 51 })
  t.equal(bad.isError, true)
  t.equal(structured(await call(client, 'check_inbox', {})).counts.total, 8, 'nothing was acknowledged')
  const over = await ctx.api({ method: 'GET', url: '/api/v1/inbox', headers: bearer(me.key) })
  t.equal(over.json().counts.total, 8)
})
