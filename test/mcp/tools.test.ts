// Every MCP tool through the SDK's client over real HTTP: its happy path, and the access rules of
// the REST service behind it (a channel the caller cannot read is NOT_FOUND, someone else's
// message is FORBIDDEN, bad input is VALIDATION_ERROR and stores nothing). The tools are the same
// in both protocol revisions: the first test speaks 2025-11-25, the others 2026-07-28. Every
// result is checked against the tool's output schema (./helpers.ts).
import { ProtocolError } from '@modelcontextprotocol/client'
import t from 'tap'
import { call, connectClient, setup, structured, textOf, type McpCtx } from './helpers.ts'
import { bearer, UUID_RE } from '../support/index.ts'

const CURSOR_RE = /^\d+-\d+$/

async function channel(ctx: McpCtx, name: string, memberIds: string[]): Promise<string> {
  const res = await ctx.api({ method: 'POST', url: '/api/v1/channels', headers: bearer(ctx.ws.owner.token), payload: { name, description: `${name} things` } })
  if (res.statusCode !== 201) throw new Error(res.body)
  const id = res.json().id as string
  for (const user_id of memberIds) {
    const add = await ctx.api({ method: 'POST', url: `/api/v1/channels/${id}/members`, headers: bearer(ctx.ws.owner.token), payload: { user_id } })
    if (add.statusCode !== 201) throw new Error(add.body)
  }
  return id
}

async function restPost(ctx: McpCtx, token: string, channelId: string, text: string): Promise<string> {
  const res = await ctx.api({ method: 'POST', url: `/api/v1/channels/${channelId}/messages`, headers: bearer(token), payload: { text } })
  if (res.statusCode !== 201) throw new Error(res.body)
  return res.json().id as string
}

async function messageCount(ctx: McpCtx, channelId: string): Promise<number> {
  return ctx.app.db.prisma.message.count({ where: { channelId } })
}

t.test('MCP tools over the REST services', async (t) => {
  const ctx = await setup(t, { env: { MAX_FILE_BYTES: '2048' } })
  const [agent1, agent2] = ctx.ws.agents as [(typeof ctx.ws.agents)[0], (typeof ctx.ws.agents)[0]]
  const general = await channel(ctx, 'general', [agent1.id, agent2.id])
  const secret = await channel(ctx, 'secret', [agent2.id])
  const { client } = await connectClient(t, ctx.base, agent1.key)

  await t.test('tools/list: the tools, each described with an object schema', async (t) => {
    const { tools } = await client.listTools()
    t.same(tools.map((x) => x.name).sort(), [
      'ack_inbox',
      'append_stream',
      'check_inbox',
      'delete_message',
      'edit_message',
      'finish_stream',
      'get_approval',
      'list_agents',
      'list_channels',
      'list_members',
      'mark_read',
      'open_dm',
      'post_message',
      'react',
      'read_inbox',
      'read_messages',
      'read_thread',
      'request_approval',
      'search_messages',
      'set_status',
      'start_stream',
      'wait_for_events',
      'wait_for_inbox',
      'whoami',
    ])
    for (const tool of tools) {
      t.ok(tool.description && tool.description.length > 40, `${tool.name} has a description`)
      t.equal(tool.inputSchema.type, 'object')
      t.equal(tool.outputSchema?.type, 'object', `${tool.name} declares its output`)
    }
    const post = tools.find((x) => x.name === 'post_message')!
    t.same(post.inputSchema.required?.sort(), ['channel', 'text'])
    // Arguments with a default may be left out.
    t.same(tools.find((x) => x.name === 'list_channels')!.inputSchema.required, undefined)
    t.same(tools.find((x) => x.name === 'wait_for_events')!.inputSchema.required, undefined)
    t.same(tools.find((x) => x.name === 'read_messages')!.inputSchema.required, ['channel'])
    t.same(tools.find((x) => x.name === 'list_members')!.inputSchema.required, ['channel'])
    t.equal(post.annotations?.readOnlyHint, false)
    t.equal(tools.find((x) => x.name === 'read_messages')!.annotations?.readOnlyHint, true)
  })

  await t.test('whoami', async (t) => {
    const me = await call(client, 'whoami')
    t.notOk(me.isError)
    t.same(structured(me), { type: 'AGENT', id: agent1.id, name: 'agent-1', display_name: 'agent-1', key_id: agent1.keyId })
    t.match(textOf(me), `id ${agent1.id}`)
  })

  await t.test('list_channels: only the channels the agent reads', async (t) => {
    const res = await call(client, 'list_channels')
    t.same(structured(res).channels, [
      { id: general, name: 'general', type: 'channel', description: 'general things', private: false, unread_count: 0, last_read_message_id: null, is_member: true, last_message_at: null },
    ])
    t.equal(structured(res).total, 1)
    t.equal(structured(res).next_offset, null)
    t.notMatch(textOf(res), 'secret')
  })

  await t.test('read_messages: newest page, older with before, newer with after; names work', async (t) => {
    const ids = []
    for (const text of ['one', 'two', 'three']) ids.push(await restPost(ctx, ctx.ws.owner.token, general, text))
    const newest = await call(client, 'read_messages', { channel: general, limit: 2 })
    t.notOk(newest.isError)
    const page = structured(newest)
    t.same(
      page.messages.map((m: { text: string }) => m.text),
      ['two', 'three'],
      'oldest first',
    )
    t.match(page.messages[0], { id: ids[1], channel_id: general, author_id: ctx.ws.owner.id, author_type: 'HUMAN', text: 'two', edited_at: null })
    t.equal(page.has_more, true)
    t.equal(page.direction, 'older')
    t.equal(page.older_cursor, ids[1])
    t.equal(page.newer_cursor, ids[2])
    t.match(textOf(newest), `before=${ids[1]}`)

    const older = structured(await call(client, 'read_messages', { channel: '#general', before: page.older_cursor }))
    t.same(
      older.messages.map((m: { id: string }) => m.id),
      [ids[0]],
    )
    t.equal(older.has_more, false)

    const newer = structured(await call(client, 'read_messages', { channel: 'General', after: ids[0], limit: 1 }))
    t.same(
      newer.messages.map((m: { id: string }) => m.id),
      [ids[1]],
    )
    t.equal(newer.has_more, true)
    t.equal(newer.direction, 'newer')
  })

  await t.test('read_messages: a channel the agent is not in is not found, by id or by name', async (t) => {
    await restPost(ctx, agent2.key, secret, 'classified')
    for (const ref of [secret, 'secret', '01890000-0000-7000-8000-000000000000']) {
      const res = await call(client, 'read_messages', { channel: ref })
      t.equal(res.isError, true, ref)
      t.equal(structured(res).code, 'NOT_FOUND')
      t.notMatch(textOf(res), 'classified')
    }
  })

  await t.test('post_message: an ordinary message, stored once per idempotency key', async (t) => {
    const res = await call(client, 'post_message', { channel: 'general', text: 'hello from MCP', idempotency_key: 'k-1' })
    t.notOk(res.isError)
    const message = structured(res).message
    t.match(message, { channel_id: general, author_id: agent1.id, author_name: 'agent-1', author_type: 'AGENT', text: 'hello from MCP', edited_at: null })
    t.match(message.id, UUID_RE)
    const again = await call(client, 'post_message', { channel: 'general', text: 'hello from MCP', idempotency_key: 'k-1' })
    t.equal(structured(again).message.id, message.id, 'the retry answers the first post')
    const reused = await call(client, 'post_message', { channel: 'general', text: 'something else', idempotency_key: 'k-1' })
    t.equal(structured(reused).code, 'IDEMPOTENCY_KEY_REUSED')
    const rest = await ctx.api({ method: 'GET', url: `/api/v1/channels/${general}/messages/${message.id}`, headers: bearer(ctx.ws.owner.token) })
    t.equal(rest.statusCode, 200)
    t.same(rest.json(), message, 'REST shows the same message')
    t.equal(await ctx.app.db.prisma.message.count({ where: { text: 'hello from MCP' } }), 1)
  })

  await t.test('post_message: refused cases store nothing', async (t) => {
    const before = await messageCount(ctx, secret)
    const hidden = await call(client, 'post_message', { channel: secret, text: 'let me in' })
    t.equal(structured(hidden).code, 'NOT_FOUND')
    t.equal(await messageCount(ctx, secret), before)

    const count = await messageCount(ctx, general)
    const blank = await call(client, 'post_message', { channel: general, text: '   ' })
    t.same(structured(blank), { code: 'VALIDATION_ERROR', error: "'text' must not be empty (it may be empty only when a file is attached)" })
    const unknownArg = await call(client, 'post_message', { channel: general, text: 'x', thread: 'nope' })
    t.equal(structured(unknownArg).code, 'VALIDATION_ERROR')
    t.match(structured(unknownArg).error, "unknown argument 'thread'")
    const big = await call(client, 'post_message', { channel: general, text: 'big', file: { base64: Buffer.alloc(4096).toString('base64'), filename: 'big.bin' } })
    t.equal(structured(big).code, 'PAYLOAD_TOO_LARGE')
    const privateUrl = await call(client, 'post_message', { channel: general, text: 'x', file: { url: 'http://127.0.0.1:9/secret.txt' } })
    t.equal(structured(privateUrl).code, 'INVALID_URL', 'a private address is refused by the SSRF guard')
    const metadata = await call(client, 'post_message', { channel: general, text: 'x', file: { url: 'http://169.254.169.254/latest/meta-data' } })
    t.equal(structured(metadata).code, 'INVALID_URL')
    const both = await call(client, 'post_message', { channel: general, text: 'x', file: { url: 'https://example.com/a', base64: 'AAAA' } })
    t.equal(structured(both).code, 'VALIDATION_ERROR')
    t.equal(await messageCount(ctx, general), count)
  })

  await t.test('post_message: a base64 file becomes the attachment', async (t) => {
    const content = Buffer.from('col1,col2\n1,2\n')
    const res = await call(client, 'post_message', { channel: general, text: 'the data', file: { base64: content.toString('base64'), filename: 'data.csv', content_type: 'text/csv' } })
    t.notOk(res.isError, textOf(res))
    const attachment = structured(res).message.attachment
    t.match(attachment, { file_name: 'data.csv', content_type: 'text/csv', size: content.length })
    const download = await ctx.app.inject({ method: 'GET', url: `/api/v1/attachments/${attachment.id}`, headers: bearer(agent2.key) })
    t.equal(download.statusCode, 200)
    t.same(download.rawPayload, content)
  })

  await t.test('react: adds and takes back a reaction, with the REST rules', async (t) => {
    const target = await restPost(ctx, agent2.key, general, 'please look at this')
    const added = await call(client, 'react', { channel: general, message_id: target, emoji: '👀' })
    t.notOk(added.isError)
    t.same(structured(added), { channel_id: general, message_id: target, reactions: [{ emoji: '👀', count: 1, reacted: true }] })
    t.match(textOf(added), 'Reacted 👀')
    t.same(structured(await call(client, 'react', { channel: general, message_id: target, emoji: '👀' })).reactions, [{ emoji: '👀', count: 1, reacted: true }], 'twice is once')
    const removed = await call(client, 'react', { channel: general, message_id: target, emoji: '👀', remove: true })
    t.same(structured(removed).reactions, [])
    t.equal(structured(await call(client, 'react', { channel: general, message_id: target, emoji: 'ok' })).code, 'INVALID_EMOJI')
    const secretMessage = await restPost(ctx, agent2.key, secret, 'hidden')
    t.equal(structured(await call(client, 'react', { channel: secret, message_id: secretMessage, emoji: '✅' })).code, 'NOT_FOUND')
  })

  await t.test('edit_message and delete_message: the author only (admins also delete)', async (t) => {
    const mine = structured(await call(client, 'post_message', { channel: general, text: 'typo' })).message.id
    const edited = await call(client, 'edit_message', { channel: general, message_id: mine, text: 'fixed' })
    t.notOk(edited.isError)
    t.match(structured(edited).message, { id: mine, text: 'fixed' })
    t.ok(structured(edited).message.edited_at)

    const theirs = await restPost(ctx, agent2.key, general, 'not yours')
    t.equal(structured(await call(client, 'edit_message', { channel: general, message_id: theirs, text: 'hacked' })).code, 'FORBIDDEN')
    t.equal(structured(await call(client, 'delete_message', { channel: general, message_id: theirs })).code, 'FORBIDDEN')
    t.equal((await ctx.app.db.prisma.message.findUnique({ where: { id: theirs } }))?.text, 'not yours')

    const secretMessage = await restPost(ctx, agent2.key, secret, 'hidden')
    t.equal(structured(await call(client, 'delete_message', { channel: secret, message_id: secretMessage })).code, 'NOT_FOUND')

    const deleted = await call(client, 'delete_message', { channel: general, message_id: mine })
    t.same(structured(deleted), { deleted: true, channel_id: general, message_id: mine })
    const gone = await ctx.api({ method: 'GET', url: `/api/v1/channels/${general}/messages/${mine}`, headers: bearer(agent1.key) })
    t.equal(gone.statusCode, 404)
  })

  await t.test('search_messages: only readable channels', async (t) => {
    await restPost(ctx, agent2.key, general, 'the zebra migration is tomorrow')
    await restPost(ctx, agent2.key, secret, 'the zebra secret plan')
    const res = await call(client, 'search_messages', { query: 'zebra' })
    t.notOk(res.isError)
    t.same(
      structured(res).results.map((r: { message: { text: string } }) => r.message.text),
      ['the zebra migration is tomorrow'],
    )
    t.match(structured(res).results[0].snippet, 'zebra')
    t.equal(structured(await call(client, 'search_messages', { query: 'zebra', channel: secret })).code, 'NOT_FOUND')
  })

  await t.test('open_dm: by agent name, found again, never with oneself', async (t) => {
    const opened = await call(client, 'open_dm', { participant: 'agent-2' })
    t.notOk(opened.isError)
    const dm = structured(opened).dm
    t.equal(structured(opened).created, true)
    t.match(dm, { type: 'dm', participants: [agent1.id, agent2.id].sort(), participant: { id: agent2.id, name: 'agent-2', type: 'AGENT' } })
    const again = await call(client, 'open_dm', { participant: agent2.id })
    t.equal(structured(again).dm.id, dm.id)
    t.equal(structured(again).created, false)
    t.equal(structured(await call(client, 'open_dm', { participant: agent1.id })).code, 'SELF_DM')
    t.equal(structured(await call(client, 'open_dm', { participant: 'no-such-agent' })).code, 'NOT_FOUND')
    const posted = await call(client, 'post_message', { channel: dm.id, text: 'psst' })
    t.notOk(posted.isError)
    const read = await ctx.api({ method: 'GET', url: `/api/v1/channels/${dm.id}/messages`, headers: bearer(agent2.key) })
    t.equal(read.json().messages[0].text, 'psst')
  })

  await t.test('list_members and list_agents', async (t) => {
    const members = structured(await call(client, 'list_members', { channel: 'general' }))
    t.same(members.members.map((m: { id: string }) => m.id).sort(), [ctx.ws.owner.id, agent1.id, agent2.id].sort())
    t.equal(members.total, 3)
    t.equal(structured(await call(client, 'list_members', { channel: secret })).code, 'NOT_FOUND')
    const agents = structured(await call(client, 'list_agents', { limit: 2 }))
    t.equal(agents.total, 3)
    t.equal(agents.agents.length, 2)
    t.equal(agents.next_offset, 2)
    const rest = structured(await call(client, 'list_agents', { offset: 2 }))
    t.same([...agents.agents, ...rest.agents].map((a: { name: string }) => a.name).sort(), ['agent-1', 'agent-2', 'primary-agent'])
  })

  await t.test('wait_for_events: bounded timeout, cursor back', async (t) => {
    const res = await call(client, 'wait_for_events', { timeout_seconds: 0 })
    t.notOk(res.isError)
    t.same(structured(res).events, [])
    t.match(structured(res).next_cursor, CURSOR_RE)
    t.equal(structured(await call(client, 'wait_for_events', { timeout_seconds: 31 })).code, 'VALIDATION_ERROR')
    t.equal(structured(await call(client, 'wait_for_events', { cursor: 'yesterday' })).code, 'VALIDATION_ERROR')
  })

  await t.test('a human JWT works too, with the human rules (an observer cannot post)', async (t) => {
    const { client: observer } = await connectClient(t, ctx.base, ctx.ws.observer.token)
    const me = structured(await call(observer, 'whoami'))
    t.match(me, { type: 'HUMAN', id: ctx.ws.observer.id, role: 'observer' })
    const owner = (await connectClient(t, ctx.base, ctx.ws.owner.token)).client
    // The owner reads every regular channel, secret included.
    t.notOk((await call(owner, 'read_messages', { channel: secret })).isError)
    await ctx.api({ method: 'POST', url: `/api/v1/channels/${general}/members`, headers: bearer(ctx.ws.owner.token), payload: { user_id: ctx.ws.observer.id } })
    t.equal(structured(await call(observer, 'post_message', { channel: general, text: 'may I?' })).code, 'FORBIDDEN')
  })

  await t.test('resources: the readable channels, with their history', async (t) => {
    const { resources } = await client.listResources()
    t.same(resources.map((r) => r.uri).sort(), [`ams://channels/${general}`, `ams://channels/${structured(await call(client, 'open_dm', { participant: 'agent-2' })).dm.id}`].sort())
    const read = await client.readResource({ uri: `ams://channels/${general}` })
    const text = (read.contents[0] as { text: string }).text
    t.match(text, '#general')
    t.match(text, 'the zebra migration is tomorrow')
    const templates = await client.listResourceTemplates()
    t.equal(templates.resourceTemplates[0]!.uriTemplate, 'ams://channels/{channel_id}')
    // Resource not found is -32602 with data {uri} (the code of 2026-07-28, which the SDK uses for every revision).
    for (const uri of [`ams://channels/${secret}`, 'ams://channels/not-an-id', 'https://example.com/']) {
      const error = await client.readResource({ uri }).catch((e: unknown) => e)
      t.ok(error instanceof ProtocolError, uri)
      t.equal((error as ProtocolError).code, -32602)
      t.same((error as ProtocolError).data, { uri })
      t.match((error as ProtocolError).message, 'NOT_FOUND')
    }
    const subscribe = await client.subscribeResource({ uri: `ams://channels/${secret}` }).catch((e: unknown) => e)
    t.ok(subscribe instanceof ProtocolError, 'cannot subscribe to a channel it cannot read')
    t.equal((subscribe as ProtocolError).code, -32602)
  })

  await t.test('prompts', async (t) => {
    const { prompts } = await client.listPrompts()
    t.same(prompts.map((p) => p.name).sort(), ['catch_up', 'summarize_channel'])
    const prompt = await client.getPrompt({ name: 'summarize_channel', arguments: { channel: 'general' } })
    const text = (prompt.messages[0]!.content as { text: string }).text
    t.match(text, 'Summarise')
    t.match(text, 'the zebra migration is tomorrow')
    const cursor = structured(await call(client, 'wait_for_events', { timeout_seconds: 0 })).next_cursor
    await restPost(ctx, agent2.key, general, 'are you there, agent-1?')
    const catchUp = await client.getPrompt({ name: 'catch_up', arguments: { since: cursor } })
    t.match((catchUp.messages[0]!.content as { text: string }).text, 'are you there, agent-1?')
    const hidden = await client.getPrompt({ name: 'summarize_channel', arguments: { channel: secret } }).catch((e: unknown) => e)
    t.ok(hidden instanceof ProtocolError)
    t.equal((hidden as ProtocolError).code, -32602)
    t.match((hidden as ProtocolError).data, { code: 'NOT_FOUND' })
    const unknown = await client.getPrompt({ name: 'no_such_prompt', arguments: {} }).catch((e: unknown) => e)
    t.equal((unknown as ProtocolError).code, -32602)
  })
})

t.test('mark_read: moves the read marker, unread_count follows; a channel one cannot read is not found', async (t) => {
  const ctx = await setup(t)
  const [agent1, agent2] = ctx.ws.agents as [(typeof ctx.ws.agents)[0], (typeof ctx.ws.agents)[0]]
  const general = await channel(ctx, 'general', [agent1.id, agent2.id])
  const secret = await channel(ctx, 'secret', [agent2.id])
  const { client } = await connectClient(t, ctx.base, agent1.key, 'modern')
  const posts = []
  for (const text of ['first unread', 'second unread']) {
    const res = await ctx.api({ method: 'POST', url: `/api/v1/channels/${general}/messages`, headers: bearer(agent2.key), payload: { text } })
    posts.push(res.json().id as string)
  }
  const unread = () => call(client, 'list_channels').then((r) => structured(r).channels.find((c: { id: string }) => c.id === general).unread_count)
  const before = await unread()
  t.ok(before >= 2, 'the two posts are unread')
  const first = await call(client, 'mark_read', { channel: general, message_id: posts[0] })
  t.notOk(first.isError)
  t.same(structured(first), { channel_id: general, last_read_message_id: posts[0], unread_count: 1 })
  t.equal(await unread(), 1, 'list_channels shows the same count')
  const last = await call(client, 'mark_read', { channel: 'general', message_id: posts[1] })
  t.equal(structured(last).unread_count, 0, 'a channel named by its name works too')
  const back = await call(client, 'mark_read', { channel: general, message_id: posts[0] })
  t.equal(structured(back).last_read_message_id, posts[1], 'the marker never moves back')
  const stranger = await call(client, 'mark_read', { channel: secret, message_id: posts[0] })
  t.ok(stranger.isError)
  t.equal(structured(stranger).code, 'NOT_FOUND', 'a channel the agent does not read is not found')
})

t.test('threads: post_message with thread_id replies, read_thread gives the root and its replies; a reply to a reply and a stranger are refused', async (t) => {
  const ctx = await setup(t)
  const [agent1, agent2] = ctx.ws.agents as [(typeof ctx.ws.agents)[0], (typeof ctx.ws.agents)[0]]
  const general = await channel(ctx, 'general', [agent1.id, agent2.id])
  const secret = await channel(ctx, 'secret', [agent2.id])
  const { client } = await connectClient(t, ctx.base, agent1.key, 'modern')
  const root = await restPost(ctx, agent2.key, general, 'a question for the thread')
  const hidden = await restPost(ctx, agent2.key, secret, 'not for agent1')

  const posted = await call(client, 'post_message', { channel: 'general', text: 'an answer in the thread', thread_id: root })
  t.notOk(posted.isError)
  const reply = structured(posted).message
  t.equal(reply.thread_id, root)
  t.match(textOf(posted), `in thread ${root}`)

  const read = await call(client, 'read_thread', { channel: general, message_id: root })
  t.notOk(read.isError)
  const thread = structured(read)
  t.equal(thread.root.id, root)
  t.equal(thread.root.reply_count, 1)
  t.same(
    thread.replies.map((m: { id: string }) => m.id),
    [reply.id],
  )
  t.equal(thread.has_more, false)
  t.match(textOf(read), '1 reply')
  t.match(textOf(read), 'an answer in the thread')

  const nested = await call(client, 'post_message', { channel: general, text: 'nested', thread_id: reply.id })
  t.ok(nested.isError)
  t.equal(structured(nested).code, 'THREAD_NOT_ROOT')
  const stranger = await call(client, 'read_thread', { channel: secret, message_id: hidden })
  t.ok(stranger.isError)
  t.equal(structured(stranger).code, 'NOT_FOUND')
  t.equal(await messageCount(ctx, general), 2, 'nothing more stored')
})
