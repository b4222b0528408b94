// Both protocol revisions on the same /mcp, driven by the official TypeScript SDK client: 2025-11-25
// (initialize, a session) and 2026-07-28 (pinned: server/discover, no session). The same tools,
// resources and access rules in both; resources/list pages through every channel; a 2026 client
// follows channel updates with subscriptions/listen, which only ever tells it about channels it may
// read and ends when its key is revoked.
import t from 'tap'
import { eventually } from '../webhooks/helpers.ts'
import { addMember, bearer, createChannelId, post, removeMember } from '../support/index.ts'
import { call, connectClient, ERAS, LEGACY_VERSION, MODERN_VERSION, setup, structured } from './helpers.ts'

const CHANNELS = 205

t.test('the same service in both revisions', async (t) => {
  const ctx = await setup(t, { env: { MCP_AUTH_RECHECK_MS: '200' } })
  const { owner } = ctx.ws
  const [agent1, agent2] = [ctx.ws.agents[0]!, ctx.ws.agents[1]!]
  const ops = await createChannelId(ctx.api, agent2.key, 'ops', [agent1.id])

  for (const era of ERAS) {
    await t.test(`${era}: tools, a post and the inbox, a resource`, async (t) => {
      const { client, transport } = await connectClient(t, ctx.base, agent1.key, era)
      t.equal(client.getProtocolEra(), era)
      t.equal(client.getNegotiatedProtocolVersion(), era === 'modern' ? MODERN_VERSION : LEGACY_VERSION)
      t.equal(transport.sessionId === undefined, era === 'modern', 'a session only in 2025-11-25')

      const { tools } = await client.listTools()
      t.equal(tools.length, 24)
      t.ok(tools.every((tool) => tool.outputSchema?.type === 'object'))

      const start = structured(await call(client, 'wait_for_events', { timeout_seconds: 0 })).next_cursor
      const waiting = call(client, 'wait_for_events', { cursor: start, timeout_seconds: 30 })
      await eventually(async () => ctx.app.mcp.inbox.size > 0, 'the wait to park')
      const posted = await call(client, 'post_message', { channel: 'ops', text: `hello in ${era}` })
      t.notOk(posted.isError)
      const message = structured(posted).message
      t.match(message, { channel_id: ops, author_id: agent1.id, text: `hello in ${era}` })
      const woken = structured(await waiting)
      t.match(woken.events, [{ type: 'new_message', channel_id: ops, message: { id: message.id } }])

      const read = await client.readResource({ uri: `ams://channels/${ops}` })
      t.match((read.contents[0] as { text: string }).text, `hello in ${era}`)
      const refused = await call(client, 'read_messages', { channel: 'no-such-channel' })
      t.equal(refused.isError, true)
      t.equal(structured(refused).code, 'NOT_FOUND')
    })
  }

  await t.test(`resources/list pages through all ${CHANNELS + 1} channels`, async (t) => {
    for (let i = 0; i < CHANNELS; i++) await createChannelId(ctx.api, owner.token, `bulk-${String(i).padStart(3, '0')}`)
    // The owner reads every regular channel: the bulk ones and ops.
    for (const era of ERAS) {
      const { client } = await connectClient(t, ctx.base, owner.token, era)
      const uris: string[] = []
      const pages: number[] = []
      let cursor: string | undefined
      do {
        // One page per request (the SDK's listResources() without a cursor walks them all itself).
        const page = await client.request({ method: 'resources/list', params: cursor ? { cursor } : {} })
        pages.push(page.resources.length)
        uris.push(...page.resources.map((r) => r.uri))
        cursor = page.nextCursor
      } while (cursor)
      t.same(pages, [100, 100, 6], `${era}: pages of 100`)
      t.equal(new Set(uris).size, CHANNELS + 1, `${era}: every channel once`)
      t.ok(uris.includes(`ams://channels/${ops}`))
      t.equal((await client.listResources()).resources.length, CHANNELS + 1, `${era}: the SDK's own walk reaches them all`)
      const bad = await client.listResources({ cursor: 'not-a-cursor' }).catch((e: unknown) => e as { code?: number })
      t.equal(bad.code, -32602, `${era}: an invalid cursor is invalid params`)
    }
  })

  await t.test('2026-07-28: subscriptions/listen tells a reader about its channels only', async (t) => {
    const watched = await createChannelId(ctx.api, agent2.key, 'watched', [agent1.id])
    const other = await createChannelId(ctx.api, agent2.key, 'other', [agent1.id])
    const secret = await createChannelId(ctx.api, agent2.key, 'secret')
    const uri = (id: string) => `ams://channels/${id}`
    const { client } = await connectClient(t, ctx.base, agent1.key, 'modern')
    const updates: string[] = []
    let notify = (): void => {}
    client.setNotificationHandler('notifications/resources/updated', (n) => {
      updates.push(n.params.uri)
      notify()
    })
    const next = (want: string) =>
      new Promise<void>((resolve) => {
        notify = () => updates.includes(want) && resolve()
        notify()
      })

    const subscription = await client.listen({ resourceSubscriptions: [uri(watched), uri(other), uri(secret), 'ams://channels/not-a-channel'] })
    t.same(subscription.honoredFilter, { resourceSubscriptions: [uri(watched), uri(other)] }, 'channels it cannot read are not honoured')

    await post(ctx.api, agent2.key, secret, 'not for agent-1')
    await post(ctx.api, agent2.key, watched, 'a change worth reading')
    await next(uri(watched))
    t.same(updates, [uri(watched)], 'told about the watched channel, not the secret one')

    // Removed from the channel: told once (the removal), then nothing more about it.
    updates.length = 0
    await removeMember(ctx.api, agent2.key, watched, agent1.id)
    await next(uri(watched))
    await post(ctx.api, agent2.key, watched, 'after the removal')
    await post(ctx.api, agent2.key, other, 'still a member here')
    await next(uri(other))
    t.same(updates, [uri(watched), uri(other)])
    await addMember(ctx.api, agent2.key, watched, agent1.id)

    await subscription.close()
    t.equal(await subscription.closed, 'local')
  })

  await t.test('2026-07-28: a revoked key ends its subscriptions/listen stream', async (t) => {
    const created = await ctx.api({ method: 'POST', url: `/api/v1/agents/${agent1.id}/keys`, headers: bearer(owner.token), payload: { name: 'listener' } })
    const { id: keyId, key } = created.json<{ id: string; key: string }>()
    const { client } = await connectClient(t, ctx.base, key, 'modern')
    const subscription = await client.listen({ resourceSubscriptions: [`ams://channels/${ops}`] })
    t.equal(ctx.app.mcp.modern.listening, 1)
    await ctx.api({ method: 'DELETE', url: `/api/v1/agents/${agent1.id}/keys/${keyId}`, headers: bearer(owner.token) })
    t.equal(await subscription.closed, 'remote', 'the server ended the stream')
    await eventually(async () => ctx.app.mcp.modern.listening === 0, 'the stream to be released')
  })
})
