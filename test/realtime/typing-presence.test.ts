// Typing, agent status and presence: ephemeral frames to the current members of a channel (never
// to the sender, never to strangers, never in the event log), the typing rate limit, and an
// agent's `online` / `last_seen_at` flipping as its socket opens and closes.
import t, { type Test } from 'tap'
import { setup, type Ctx } from '../conversations/fixtures/support.ts'
import { addMember, bearer, build, createChannel, seedWorkspace } from '../support/index.ts'
import { connect, listen, type WsClient } from './helpers.ts'

async function world(t: Test, c?: Ctx) {
  c ??= await setup(t)
  await listen(c.app)
  const ch = await createChannel(c.api, c.tok.a1, 'work')
  await addMember(c.api, c.tok.a1, ch.id, c.ws.member.id)
  await addMember(c.api, c.tok.a1, ch.id, c.ws.observer.id)
  const side = await createChannel(c.api, c.tok.a1, 'side')
  await addMember(c.api, c.tok.a1, side.id, c.ws.member.id)
  return { c, ch, side }
}

const open = async (t: Test, c: Ctx, token: string): Promise<WsClient> => {
  const { client } = await connect(c.app, token)
  t.teardown(() => client.close().then(() => {}))
  return client
}

/** A workspace on a server that uses Redis (presence across instances). */
async function redisCtx(t: Test): Promise<Ctx> {
  const testApp = await build(t, { redis: true })
  const ws = await seedWorkspace(testApp.app)
  return {
    ...testApp,
    ws,
    events: [],
    tok: { owner: ws.owner.token, member: ws.member.token, observer: ws.observer.token, primary: ws.primary.key, a1: ws.agents[0]!.key, a2: ws.agents[1]!.key },
  }
}

const agent = (c: Ctx, token = c.tok.a1) => c.api({ method: 'GET', url: '/api/v1/agents/me', headers: bearer(token) }).then((r) => r.json())

t.test('typing over WebSocket: to the other members only, one per channel every 3 s', async (t) => {
  const { c, ch, side } = await world(t)
  const typist = await open(t, c, c.tok.a1)
  const member = await open(t, c, c.tok.member)
  const stranger = await open(t, c, c.tok.a2)

  typist.send({ type: 'typing', channel_id: ch.id })
  typist.send({ type: 'typing', channel_id: ch.id }) // within 3 s: dropped
  typist.send({ type: 'typing', channel_id: side.id }) // another channel: its own budget
  const a1 = c.ws.agents[0]!
  t.same(await member.type('typing', (f) => f.channel_id === ch.id), { type: 'typing', channel_id: ch.id, member_id: a1.id, member_type: 'AGENT', member_name: a1.name })
  await member.type('typing', (f) => f.channel_id === side.id)
  t.equal(member.frames.filter((f) => f.type === 'typing' && f.channel_id === ch.id).length, 1, 'the repeat within 3 s was dropped')

  // The typist's own socket answers a ping after its typing frames: none came back to it.
  typist.send({ type: 'ping', id: 'after' })
  await typist.type('pong')
  t.same(
    typist.frames.filter((f) => f.type === 'typing'),
    [],
    'not echoed to the sender',
  )

  // The stranger (an agent in neither channel) gets a typing frame of its own DM, and none before it.
  const dm = (await c.api({ method: 'POST', url: '/api/v1/dm', headers: bearer(c.tok.a1), payload: { participant_id: c.ws.agents[1]!.id } })).json()
  await member.close()
  const marker = await open(t, c, c.tok.a1)
  marker.send({ type: 'typing', channel_id: dm.id })
  t.equal((await stranger.type('typing')).channel_id, dm.id, 'the first typing frame the stranger sees is of its own DM')

  const page = (await c.api({ method: 'GET', url: '/api/v1/events?limit=500', headers: bearer(c.tok.member) })).json()
  t.same(
    page.events.filter((f: any) => f.type === 'typing'),
    [],
    'typing is not in the event log',
  )
  t.equal(await c.app.db.prisma.message.count(), 0, 'nor stored as a message')
})

t.test('typing refusals on the socket: not a member, observer, bad frame', async (t) => {
  const { c, ch } = await world(t)
  const other = await createChannel(c.api, c.tok.a2, 'private')
  const outsider = await open(t, c, c.tok.member)
  outsider.send({ type: 'typing', id: 't1', channel_id: other.id })
  t.same(await outsider.type('error'), { type: 'error', id: 't1', code: 'NOT_FOUND', error: 'channel not found' })
  const observer = await open(t, c, c.tok.observer)
  observer.send({ type: 'typing', id: 't2', channel_id: ch.id })
  t.match(await observer.type('error'), { id: 't2', code: 'FORBIDDEN' })
  observer.send({ type: 'typing', id: 't3', channel_id: 'nope' })
  t.match(await observer.type('error'), { id: 't3', code: 'VALIDATION_ERROR' })
})

t.test('typing over REST: 204, pushed to members; refusals', async (t) => {
  const { c, ch } = await world(t)
  const member = await open(t, c, c.tok.member)
  const typing = (token: string | null, id: string) => c.api({ method: 'POST', url: `/api/v1/channels/${id}/typing`, headers: token ? bearer(token) : {} })
  const first = await typing(c.tok.a1, ch.id)
  t.equal(first.statusCode, 204)
  t.equal(first.body, '')
  t.equal((await typing(c.tok.a1, ch.id)).statusCode, 204, 'a repeat within 3 s answers 204 and is dropped')
  t.match(await member.type('typing'), { channel_id: ch.id, member_id: c.ws.agents[0]!.id })

  t.equal((await typing(null, ch.id)).statusCode, 401)
  t.equal((await typing(c.tok.observer, ch.id)).statusCode, 403, 'observers')
  t.equal((await typing(c.tok.owner, ch.id)).statusCode, 403, 'the owner in a channel it has not joined')
  const other = await createChannel(c.api, c.tok.a2, 'private')
  const hidden = await typing(c.tok.member, other.id)
  t.equal(hidden.statusCode, 404)
  t.equal(hidden.json().code, 'NOT_FOUND')
  // Proof that nothing of the refused ones reached the member: the next typing frame is a2's.
  await typing(c.tok.a2, other.id)
  await addMember(c.api, c.tok.a1, ch.id, c.ws.agents[1]!.id)
  await typing(c.tok.a2, ch.id)
  t.match(await member.type('typing'), { member_id: c.ws.agents[1]!.id })
  t.equal(member.frames.filter((f) => f.type === 'typing').length, 2)
})

t.test('presence: online and last_seen_at flip as the socket opens and closes; members are told', async (t) => {
  const { c } = await world(t)
  const before = await agent(c)
  t.equal(before.online, false)
  t.equal(before.last_seen_at, null, 'never connected')
  t.equal(before.status, null)
  const member = await open(t, c, c.tok.member)

  const { client: socket } = await connect(c.app, c.tok.a1)
  const up = await member.type('presence')
  t.same(Object.keys(up).sort(), ['agent_id', 'last_seen_at', 'member_id', 'member_type', 'online', 'type'])
  t.match(up, { member_id: c.ws.agents[0]!.id, member_type: 'AGENT', agent_id: c.ws.agents[0]!.id, online: true })
  const during = await agent(c)
  t.equal(during.online, true)
  t.equal(during.last_seen_at, up.last_seen_at)
  const listed = (await c.api({ method: 'GET', url: '/api/v1/agents', headers: bearer(c.tok.member) })).json()
  t.same(
    listed.filter((a: any) => a.online).map((a: any) => a.id),
    [c.ws.agents[0]!.id],
    'GET /agents: only the connected agent is online',
  )
  const directory = (await c.api({ method: 'GET', url: '/api/v1/directory', headers: bearer(c.tok.member) })).json()
  t.match(
    directory.find((e: any) => e.id === c.ws.agents[0]!.id),
    { online: true, last_seen_at: up.last_seen_at },
  )
  t.match(
    directory.find((e: any) => e.id === c.ws.member.id),
    { online: true, status_text: null },
    'humans have presence too: the member has a socket open',
  )

  await socket.close()
  const down = await member.type('presence', (f) => f.online === false)
  t.equal(down.agent_id, c.ws.agents[0]!.id)
  const after = await agent(c)
  t.equal(after.online, false)
  t.equal(after.last_seen_at, down.last_seen_at)
  t.ok(after.last_seen_at >= during.last_seen_at)
})

t.test('presence with Redis: online while any socket is open', async (t) => {
  const c = await redisCtx(t)
  const { ch } = await world(t, c)
  const member = await open(t, c, c.tok.member)
  const one = await connect(c.app, c.tok.a1)
  const two = await connect(c.app, c.tok.a1)
  await member.type('presence', (f) => f.online === true)
  t.equal((await agent(c)).online, true)
  await one.client.close()
  t.equal((await agent(c)).online, true, 'one socket left')
  // typing crosses the Redis signal channel too
  two.client.send({ type: 'typing', channel_id: ch.id })
  await member.type('typing')
  await two.client.close()
  await member.type('presence', (f) => f.online === false)
  t.equal((await agent(c)).online, false)
  t.equal(member.frames.filter((f) => f.type === 'presence').length, 2, 'one frame per change, not per socket')
})

t.test('presence with Redis: a socket closed while the next opens (a reconnect) never leaves the agent shown offline', async (t) => {
  const c = await redisCtx(t)
  await world(t, c)
  const member = await open(t, c, c.tok.member)
  let current = (await connect(c.app, c.tok.a1)).client
  // Each change awaits Redis and PostgreSQL before it is told: the close of one socket and the
  // opening of the next race, twenty times.
  for (let i = 0; i < 20; i++) {
    const closing = current.close()
    current = (await connect(c.app, c.tok.a1)).client
    await closing
  }
  await current.close()
  const states = (): boolean[] => member.frames.filter((f) => f.type === 'presence').map((f) => f.online === true)
  const deadline = Date.now() + 15_000
  while ((await agent(c)).online !== false || states().filter((s) => !s).length < states().filter((s) => s).length) {
    if (Date.now() > deadline) break
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  const seen = states()
  t.ok(seen.length >= 2, `told at least once each way (${seen.length} frames)`)
  t.ok(
    seen.every((online, i) => online === (i % 2 === 0)),
    `the frames alternate online, offline, online, ... as the changes happened: ${seen.map((s) => (s ? 'on' : 'off')).join(' ')}`,
  )
  t.equal(seen.at(-1), false, 'the last word is offline: the agent has no socket left')
})

t.test('agent status: set, shown, pushed, cleared; bounds', async (t) => {
  const { c } = await world(t)
  const member = await open(t, c, c.tok.member)
  const put = (token: string, payload: unknown) => c.api({ method: 'PUT', url: '/api/v1/agents/me/status', headers: bearer(token), payload: payload as object })
  const set = await put(c.tok.a1, { text: 'reviewing PR 42', expires_in_seconds: 600 })
  t.equal(set.statusCode, 200)
  t.same(Object.keys(set.json()).sort(), ['expires_at', 'text'])
  t.equal(set.json().text, 'reviewing PR 42')
  const ms = Date.parse(set.json().expires_at) - Date.now()
  t.ok(ms > 590_000 && ms <= 600_000, 'expires in 600 s')
  t.same(await member.type('agent_status'), { type: 'agent_status', agent_id: c.ws.agents[0]!.id, text: 'reviewing PR 42', expires_at: set.json().expires_at })
  t.same((await agent(c)).status, set.json())
  const directory = (await c.api({ method: 'GET', url: '/api/v1/directory', headers: bearer(c.tok.member) })).json()
  t.equal(directory.find((e: any) => e.id === c.ws.agents[0]!.id).status_text, 'reviewing PR 42')

  const cleared = await c.api({ method: 'DELETE', url: '/api/v1/agents/me/status', headers: bearer(c.tok.a1) })
  t.equal(cleared.statusCode, 204)
  t.same(await member.type('agent_status', (f) => f.text === null), { type: 'agent_status', agent_id: c.ws.agents[0]!.id, text: null, expires_at: null })
  t.equal((await agent(c)).status, null)

  for (const bad of [{ text: '' }, { text: '   ' }, { text: 'x'.repeat(101) }, { text: 'ok', expires_in_seconds: 0 }, { text: 'ok', expires_in_seconds: 86_401 }, { text: 'ok', extra: 1 }]) {
    const res = await put(c.tok.a1, bad)
    t.equal(res.statusCode, 400, JSON.stringify(bad).slice(0, 60))
  }
  t.equal((await agent(c)).status, null, 'nothing stored by the refusals')
  const human = await put(c.tok.member, { text: 'hi' })
  t.equal(human.statusCode, 403, 'humans have no status')
  t.equal((await c.api({ method: 'PUT', url: '/api/v1/agents/me/status', payload: { text: 'x' } })).statusCode, 401)
  // A stranger to the agent's channels does not hear of its status.
  const stranger = await open(t, c, c.tok.owner)
  await put(c.tok.a2, { text: 'a2 is busy' }) // a2 is in no channel with the owner either
  const dm = (await c.api({ method: 'POST', url: '/api/v1/dm', headers: bearer(c.tok.a1), payload: { participant_id: c.ws.owner.id } })).json()
  t.ok(dm.id)
  await put(c.tok.a1, { text: 'now in a DM with the owner' })
  t.equal((await stranger.type('agent_status')).text, 'now in a DM with the owner', 'the first status the owner hears is from an agent it shares a channel with')
})
