// The WebSocket gateway over real sockets: authentication at the upgrade, delivery of every event
// type to members only, send_message through the same service as REST, frame errors, the rate
// limit and the payload limit.
import t from 'tap'
import { build } from '../helper.ts'
import { connect, listen, openWs, refusedUpgrade, wsUrl } from './helpers.ts'
import { addMember, bearer, createChannelId, CURSOR_RE, post, removeMember, seedWorkspace, UUID_RE } from '../support/index.ts'

t.test('a message posted over REST reaches every connected member with the REST message object', async (t) => {
  const { app, api } = await build(t)
  const ws = await seedWorkspace(app)
  await listen(app)
  const [a1] = ws.agents
  const channel = await createChannelId(api, ws.primary.key, 'delivery', [a1!.id, ws.member.id])

  const agent = await connect(app, a1!.key)
  const human = await connect(app, ws.member.token)
  t.match(agent.ready, { type: 'ready', replayed: 0, principal: { id: a1!.id, type: 'AGENT', name: a1!.name } })
  t.match(agent.ready.cursor, CURSOR_RE)
  t.match(human.ready.principal, { id: ws.member.id, type: 'HUMAN' })

  const message = await post(api, ws.primary.key, channel, 'hello over REST')
  for (const { client } of [agent, human]) {
    const frame = await client.type('new_message')
    t.same(Object.keys(frame).sort(), ['channel_id', 'cursor', 'event_id', 'message', 'occurred_at', 'type'])
    t.same(frame.message, message, 'the same object as the REST answer')
    t.equal(frame.channel_id, channel)
    t.match(frame.event_id, UUID_RE)
    t.match(frame.cursor, CURSOR_RE)
    t.ok(frame.cursor > agent.ready.cursor || frame.cursor.length > agent.ready.cursor.length, 'cursor moves forward')
  }
  await agent.client.close()
  await human.client.close()
})

t.test('the Authorization header is accepted too; a +-key sent unencoded still works', async (t) => {
  const { app, api } = await build(t)
  const ws = await seedWorkspace(app)
  await listen(app)
  const client = await openWs(wsUrl(app), { headers: bearer(ws.primary.key) })
  t.match(await client.type('ready'), { principal: { id: ws.primary.id } })
  await client.close()
  // A raw key in the URL: a '+' turns into a space when the client does not encode it.
  const raw = await openWs(`${wsUrl(app)}?token=${ws.agents[0]!.key}`)
  t.match(await raw.type('ready'), { principal: { id: ws.agents[0]!.id } })
  await raw.close()
  t.ok(api)
})

t.test('bad or missing credentials are refused at the upgrade with HTTP 401', async (t) => {
  const { app, api } = await build(t)
  const ws = await seedWorkspace(app)
  await listen(app)
  const unauthorized = { error: String, code: 'UNAUTHORIZED' }
  for (const [label, url, options] of [
    ['no token', wsUrl(app), {}],
    ['unknown key', wsUrl(app, { token: 'svc_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=' }), {}],
    ['garbage', wsUrl(app, { token: 'nope' }), {}],
    ['forged JWT', wsUrl(app, { token: `${ws.member.token.slice(0, -4)}AAAA` }), {}],
    ['integration-style key', wsUrl(app, { token: 'svc_int_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=' }), {}],
    ['bad header', wsUrl(app), { headers: { authorization: 'Bearer svc_nope' } }],
  ] as const) {
    const res = await refusedUpgrade(url, options)
    t.equal(res.status, 401, label)
    t.match(res.body, unauthorized, label)
  }
  const a1 = ws.agents[0]!
  const before = await connect(app, a1.key)
  await before.client.close()
  const revoke = await api({ method: 'DELETE', url: `/api/v1/agents/${a1.id}/keys/${a1.keyId}`, headers: bearer(ws.owner.token) })
  t.equal(revoke.statusCode, 204)
  t.equal((await refusedUpgrade(wsUrl(app, { token: a1.key }))).status, 401, 'a key revoked after it connected is refused at its next upgrade')
  for (const since of ['yesterday', 'abc', '-1', '1.5', '1-', '-0', '1-2-3', '1e3', '']) {
    const badSince = await refusedUpgrade(wsUrl(app, { token: ws.primary.key, since }))
    t.equal(badSince.status, 400, `a malformed since is a 400: ${JSON.stringify(since)}`)
    t.match(badSince.body, { code: 'VALIDATION_ERROR' })
  }
})

t.test('query parameters the gateway does not use are ignored', async (t) => {
  const { app } = await build(t)
  const ws = await seedWorkspace(app)
  await listen(app)
  const plain = await openWs(wsUrl(app, { token: ws.primary.key, foo: '1', v: '2', since: undefined }))
  t.match(await plain.type('ready'), { replayed: 0, principal: { id: ws.primary.id } })
  await plain.close()
  const resumed = await openWs(wsUrl(app, { token: ws.primary.key, since: '99999999999999-0', client: 'sdk/1.2' }))
  t.equal((await resumed.next()).type, 'resync_required', 'since is still honoured next to unknown parameters')
  t.match(await resumed.type('ready'), { principal: { id: ws.primary.id } })
  await resumed.close()
  t.equal((await refusedUpgrade(wsUrl(app, { foo: '1' }))).status, 401, 'an unknown parameter is no credential')
})

t.test('only members receive a channel’s events', async (t) => {
  const { app, api } = await build(t)
  const ws = await seedWorkspace(app)
  await listen(app)
  const [a1, a2] = ws.agents
  const secret = await createChannelId(api, ws.primary.key, 'secret', [a1!.id])
  const open = await createChannelId(api, ws.primary.key, 'open', [a1!.id, a2!.id, ws.member.id])

  const outsider = await connect(app, a2!.key)
  const human = await connect(app, ws.member.token)
  const owner = await connect(app, ws.owner.token)
  const insider = await connect(app, a1!.key)

  const hidden = await post(api, ws.primary.key, secret, 'members only')
  const visible = await post(api, ws.primary.key, open, 'for everyone here')
  t.equal((await insider.client.type('new_message')).message.id, hidden.id)
  t.equal((await insider.client.type('new_message')).message.id, visible.id)
  for (const { client } of [outsider, human]) {
    t.equal((await client.type('new_message')).message.id, visible.id)
    t.notOk(
      client.frames.some((f) => f.channel_id === secret),
      'nothing of the channel it is not in',
    )
  }
  // The workspace owner reads every regular channel, joined or not: it receives their events live
  // too (docs/decisions.md, "Live sidebar").
  t.equal((await owner.client.type('new_message')).message.id, hidden.id)
  t.equal((await owner.client.type('new_message')).message.id, visible.id)
  for (const c of [outsider, human, owner, insider]) await c.client.close()
})

t.test('every kind of change reaches members as its own frame', async (t) => {
  const { app, api } = await build(t)
  const ws = await seedWorkspace(app)
  await listen(app)
  const [a1, a2] = ws.agents
  const { client } = await connect(app, a1!.key)
  const other = await connect(app, a2!.key)

  // A channel created by the connected agent: channel_created and its own member_joined.
  const res = await api({ method: 'POST', url: '/api/v1/channels', headers: bearer(a1!.key), payload: { name: 'events', description: 'all kinds' } })
  t.equal(res.statusCode, 201)
  const channel = res.json().id as string
  const created = await client.type('channel_created')
  t.same(Object.keys(created).sort(), ['channel', 'channel_id', 'creator_id', 'creator_type', 'cursor', 'event_id', 'occurred_at', 'type'])
  t.match(created, { channel_id: channel, channel: { id: channel, name: 'events', description: 'all kinds', type: 'channel' }, creator_id: a1!.id, creator_type: 'AGENT' })
  t.match(await client.type('member_joined'), { channel_id: channel, member_id: a1!.id, member_type: 'AGENT', member_name: a1!.name })

  await addMember(api, a1!.key, channel, a2!.id)
  t.match(await client.type('member_joined', (f) => f.member_id === a2!.id), { channel_id: channel, member_type: 'AGENT' })
  t.match(await other.client.type('member_joined', (f) => f.member_id === a2!.id), { channel_id: channel }, 'the new member hears of its own joining')

  const message = await post(api, a1!.key, channel, 'first draft')
  await client.type('new_message')
  const edit = await api({ method: 'PATCH', url: `/api/v1/channels/${channel}/messages/${message.id}`, headers: bearer(a1!.key), payload: { text: 'final text' } })
  t.equal(edit.statusCode, 200)
  const updated = await client.type('message_updated')
  t.same(updated.message, edit.json())
  t.equal(updated.message.text, 'final text')

  const del = await api({ method: 'DELETE', url: `/api/v1/channels/${channel}/messages/${message.id}`, headers: bearer(a1!.key) })
  t.ok(del.statusCode === 204 || del.statusCode === 200)
  t.match(await client.type('message_deleted'), { channel_id: channel, message_id: message.id })

  const patch = await api({ method: 'PATCH', url: `/api/v1/channels/${channel}`, headers: bearer(a1!.key), payload: { name: 'renamed' } })
  t.equal(patch.statusCode, 200)
  t.match(await client.type('channel_updated'), { channel_id: channel, channel: { id: channel, name: 'renamed' } })

  await removeMember(api, a1!.key, channel, a2!.id)
  t.match(await client.type('member_left'), { channel_id: channel, member_id: a2!.id, member_type: 'AGENT' })
  t.match(await other.client.type('member_left'), { channel_id: channel, member_id: a2!.id }, 'the removed member is told')

  await addMember(api, a1!.key, channel, a2!.id)
  await other.client.type('member_joined', (f) => f.member_id === a2!.id)
  const gone = await api({ method: 'DELETE', url: `/api/v1/channels/${channel}`, headers: bearer(a1!.key) })
  t.ok(gone.statusCode === 204 || gone.statusCode === 200)
  for (const c of [client, other.client]) {
    const frame = await c.type('channel_deleted')
    t.same(Object.keys(frame).sort(), ['channel_id', 'cursor', 'event_id', 'occurred_at', 'type'])
    t.equal(frame.channel_id, channel)
  }

  // A new DM: both participants learn of it.
  const dm = await api({ method: 'POST', url: '/api/v1/dm', headers: bearer(a1!.key), payload: { participant_id: a2!.id } })
  t.ok(dm.statusCode === 201 || dm.statusCode === 200)
  for (const c of [client, other.client]) t.match(await c.type('channel_created', (f) => f.channel_id === dm.json().id), { channel: { type: 'dm' } })
  const dmMessage = await post(api, a2!.key, dm.json().id, 'psst')
  t.equal((await client.type('new_message', (f) => f.channel_id === dm.json().id)).message.id, dmMessage.id)

  const ids = client.frames.filter((f) => f.event_id).map((f) => f.event_id)
  t.equal(new Set(ids).size, ids.length, 'no event twice')
  await client.close()
  await other.client.close()
})

t.test('a removed member stops receiving at once; a deleted channel too', async (t) => {
  const { app, api } = await build(t)
  const ws = await seedWorkspace(app)
  await listen(app)
  const [a1] = ws.agents
  const leaving = await createChannelId(api, ws.primary.key, 'leaving', [a1!.id])
  const staying = await createChannelId(api, ws.primary.key, 'staying', [a1!.id])
  const doomed = await createChannelId(api, ws.primary.key, 'doomed', [a1!.id])
  const { client } = await connect(app, a1!.key)

  await removeMember(api, ws.primary.key, leaving, a1!.id)
  await client.type('member_left', (f) => f.channel_id === leaving)
  await post(api, ws.primary.key, leaving, 'after the removal')
  t.equal((await api({ method: 'DELETE', url: `/api/v1/channels/${doomed}`, headers: bearer(ws.primary.key) })).statusCode < 300, true)
  await client.type('channel_deleted', (f) => f.channel_id === doomed)
  const marker = await post(api, ws.primary.key, staying, 'marker')
  // Events reach a socket in log order: once the marker is here, the earlier post would have been too.
  t.equal((await client.type('new_message', (f) => f.channel_id === staying)).message.id, marker.id)
  t.notOk(client.frames.some((f) => f.type === 'new_message' && f.channel_id === leaving))
  await client.close()
})

t.test('send_message goes through the message service: ack with the stored message, errors with the client id', async (t) => {
  const { app, api } = await build(t)
  const ws = await seedWorkspace(app)
  await listen(app)
  const [a1] = ws.agents
  const channel = await createChannelId(api, ws.primary.key, 'ws-post', [a1!.id, ws.observer.id])
  const elsewhere = await createChannelId(api, ws.primary.key, 'elsewhere')
  const { client } = await connect(app, a1!.key)
  const peer = await connect(app, ws.primary.key)

  client.send({ type: 'send_message', id: 'c-1', channel_id: channel, text: 'over the socket' })
  const ack = await client.type('ack')
  t.same(Object.keys(ack).sort(), ['id', 'message', 'type'])
  t.equal(ack.id, 'c-1')
  t.match(ack.message, { channel_id: channel, author_id: a1!.id, author_name: a1!.name, author_type: 'AGENT', text: 'over the socket', edited_at: null })
  t.same((await peer.client.type('new_message')).message, ack.message, 'others get the same object')
  t.same((await client.type('new_message')).message, ack.message, 'the sender too')
  const list = await api({ method: 'GET', url: `/api/v1/channels/${channel}/messages`, headers: bearer(a1!.key) })
  t.ok(JSON.stringify(list.json()).includes(ack.message.id), 'stored like a REST post')

  client.send({ type: 'send_message', channel_id: channel, text: 'no id' })
  t.equal((await client.type('ack')).id, null, 'a frame without id is acknowledged with id null')

  const cases: [unknown, string | null, string][] = [
    [{ type: 'send_message', id: 'c-2', channel_id: channel }, 'c-2', 'VALIDATION_ERROR'],
    [{ type: 'send_message', id: 'c-3', channel_id: 'not-a-uuid', text: 'x' }, 'c-3', 'VALIDATION_ERROR'],
    [{ type: 'send_message', id: 'c-5', channel_id: channel, text: '' }, 'c-5', 'VALIDATION_ERROR'],
    [{ type: 'send_message', id: 'c-6', channel_id: channel, text: 'x'.repeat(app.config.maxMessageLength + 1) }, 'c-6', 'VALIDATION_ERROR'],
    [{ type: 'send_message', id: 'c-7', channel_id: elsewhere, text: 'not a member' }, 'c-7', 'NOT_FOUND'],
    [{ type: 'send_message', id: 'c-8', channel_id: '00000000-0000-7000-8000-000000000000', text: 'no such channel' }, 'c-8', 'NOT_FOUND'],
    [{ type: 'shout', id: 'c-9' }, 'c-9', 'VALIDATION_ERROR'],
    ['{not json', null, 'INVALID_JSON'],
  ]
  for (const [frame, id, code] of cases) {
    client.send(frame)
    const error = await client.type('error')
    t.same(Object.keys(error).sort(), ['code', 'error', 'id', 'type'])
    t.equal(error.id, id, `id echoed for ${code}`)
    t.equal(error.code, code, JSON.stringify(frame).slice(0, 80))
    t.type(error.error, 'string')
  }
  client.ws.send(Buffer.from('binary'), { binary: true })
  t.match(await client.type('error'), { code: 'VALIDATION_ERROR', id: null })

  const observer = await connect(app, ws.observer.token)
  observer.client.send({ type: 'send_message', id: 'o-1', channel_id: channel, text: 'observers only read' })
  t.match(await observer.client.type('error'), { id: 'o-1', code: 'FORBIDDEN' })

  client.send({ type: 'ping', id: 'p-1' })
  t.same(await client.type('pong'), { type: 'pong', id: 'p-1' })

  const count = await app.db.prisma.message.count({ where: { channelId: { in: [channel, elsewhere] } } })
  t.equal(count, 2, 'refused frames stored nothing')
  for (const c of [client, peer.client, observer.client]) await c.close()
})

t.test('client frames may carry client_id (an alias of id, echoed back) and properties the server ignores', async (t) => {
  const { app, api } = await build(t)
  const ws = await seedWorkspace(app)
  await listen(app)
  const [a1] = ws.agents
  const channel = await createChannelId(api, ws.primary.key, 'client-ids', [a1!.id])
  const elsewhere = await createChannelId(api, ws.primary.key, 'not-mine')
  const { client } = await connect(app, a1!.key)

  client.send({ type: 'send_message', channel_id: channel, text: 'tagged', client_id: 'x' })
  const ack = await client.type('ack')
  t.same(Object.keys(ack).sort(), ['client_id', 'id', 'message', 'type'])
  t.match(ack, { id: 'x', client_id: 'x', message: { channel_id: channel, author_id: a1!.id, text: 'tagged' } })
  t.same((await client.type('new_message')).message, ack.message, 'posted like any other message')

  client.send({ type: 'send_message', id: 'i-1', client_id: 'c-1', channel_id: channel, text: 'both', trace: { span: 7 }, extra: 1 })
  t.match(await client.type('ack'), { id: 'i-1', client_id: 'c-1', message: { text: 'both' } }, 'each field echoes what was sent in it')

  client.send({ type: 'send_message', id: 'i-2', channel_id: channel, text: 'extra only', extra: 1 })
  const plain = await client.type('ack')
  t.same(Object.keys(plain).sort(), ['id', 'message', 'type'], 'no client_id when the client did not send one')
  t.match(plain, { id: 'i-2', message: { text: 'extra only' } })

  const refused: [unknown, Record<string, unknown>, string][] = [
    [{ type: 'send_message', client_id: 'bad-1', channel_id: 'not-a-uuid', text: 'x', extra: true }, { id: 'bad-1', client_id: 'bad-1' }, 'VALIDATION_ERROR'],
    [{ type: 'send_message', client_id: 'nf-1', channel_id: elsewhere, text: 'not a member' }, { id: 'nf-1', client_id: 'nf-1' }, 'NOT_FOUND'],
    [{ type: 'shout', client_id: 'u-1' }, { id: 'u-1', client_id: 'u-1' }, 'VALIDATION_ERROR'],
    [{ type: 'send_message', client_id: '', channel_id: channel, text: 'x' }, { id: null }, 'VALIDATION_ERROR'],
    [{ type: 'send_message', client_id: 'y'.repeat(129), channel_id: channel, text: 'x' }, { id: null }, 'VALIDATION_ERROR'],
    [{ type: 'send_message', id: 'i-3', client_id: 42, channel_id: channel, text: 'x' }, { id: 'i-3' }, 'VALIDATION_ERROR'],
    ['null', { id: null }, 'VALIDATION_ERROR'],
  ]
  for (const [frame, echo, code] of refused) {
    client.send(frame)
    const error = await client.type('error')
    t.same(Object.keys(error).sort(), ['code', 'error', 'type', ...Object.keys(echo)].sort(), JSON.stringify(frame).slice(0, 60))
    t.match(error, { ...echo, code })
  }

  client.send({ type: 'ping', client_id: 'p-1', at: 123 })
  t.same(await client.type('pong'), { type: 'pong', id: 'p-1', client_id: 'p-1' })
  client.send({ type: 'ping', id: 'p-2', extra: 'ignored' })
  t.same(await client.type('pong'), { type: 'pong', id: 'p-2' })

  const texts = (await app.db.prisma.message.findMany({ where: { channelId: { in: [channel, elsewhere] } } })).map((m) => m.text).sort()
  t.same(texts, ['both', 'extra only', 'tagged'], 'the accepted frames were stored, the refused ones not')
  await client.close()
})

t.test('beyond the per-connection rate an error frame RATE_LIMITED comes back and the connection stays', async (t) => {
  const { app, api } = await build(t, { env: { WS_MESSAGES_PER_SECOND: '1' } })
  const ws = await seedWorkspace(app)
  await listen(app)
  const channel = await createChannelId(api, ws.primary.key, 'limited')
  const { client } = await connect(app, ws.primary.key)
  for (let i = 0; i < 6; i++) client.send({ type: 'ping', id: `r-${i}` })
  const answers = []
  for (let i = 0; i < 6; i++) answers.push(await client.next((f) => f.type === 'pong' || f.type === 'error'))
  const limited = answers.filter((f) => f.type === 'error')
  t.ok(limited.length >= 1, 'some frames were refused')
  for (const f of limited) t.match(f, { code: 'RATE_LIMITED', id: /^r-\d$/ })
  t.same(answers.map((f) => f.id).sort(), ['r-0', 'r-1', 'r-2', 'r-3', 'r-4', 'r-5'], 'every frame answered once')
  const message = await post(api, ws.primary.key, channel, 'still connected')
  t.equal((await client.type('new_message')).message.id, message.id)
  await client.close()
})

t.test('a frame larger than the payload limit closes the socket with 1009', async (t) => {
  const { app } = await build(t, { env: { WS_MAX_PAYLOAD_BYTES: '2048' } })
  const ws = await seedWorkspace(app)
  await listen(app)
  const { client } = await connect(app, ws.primary.key)
  client.send({ type: 'ping', id: 'x'.repeat(4096) })
  t.equal((await client.closed).code, 1009)
})

t.test('an agent connecting records agent.connected in the outbox', async (t) => {
  const { app } = await build(t)
  const ws = await seedWorkspace(app)
  await listen(app)
  const seen = new Promise<Record<string, unknown>>((resolve) => {
    app.events.subscribe((events) => {
      for (const e of events) if (e.type === 'agent.connected') resolve(e.payload)
    })
  })
  const human = await connect(app, ws.member.token)
  const { client } = await connect(app, ws.agents[0]!.key)
  const payload = await seen
  t.match(payload, { agent_id: ws.agents[0]!.id, agent_name: ws.agents[0]!.name })
  t.ok(!Number.isNaN(Date.parse(String(payload.connected_at))))
  const rows = await app.db.prisma.outboxEvent.findMany({ where: { type: 'agent.connected' } })
  t.equal(rows.length, 1, 'one row, for the agent only (not for the human)')
  t.equal(rows[0]!.channelId, null)
  t.notOk(
    client.frames.some((f) => f.type === 'agent_connected'),
    'not pushed to sockets',
  )
  await client.close()
  await human.client.close()
})
