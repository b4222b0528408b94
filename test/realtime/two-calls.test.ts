// "Wait for the next message that mentions me, and answer it in its thread" takes two calls by the
// agent on every transport (issue 23): one that waits (long poll, SSE stream, WebSocket, MCP
// wait_for_events or wait_for_inbox) and is woken by the mention alone — not by chatter, not by
// its own posts — and one that replies with thread_id. Each test counts the agent's calls.
import t, { type Test } from 'tap'
import { call, connectClient, structured } from '../mcp/helpers.ts'
import { bearer, build, seedWorkspace, type Api, type Workspace } from '../support/index.ts'
import { postIn } from './addressed-scenario.ts'
import { connect, listen } from './helpers.ts'
import { baseUrl, SseClient, streamUrl } from './sse-client.ts'

/** The agent's calls, counted. */
class Calls {
  n = 0
  async count<T>(call: () => Promise<T>): Promise<T> {
    this.n += 1
    return call()
  }
}

async function setup(t: Test) {
  const built = await build(t)
  const ws = await seedWorkspace(built.app)
  await listen(built.app)
  const me = ws.agents[0]!
  const room = (await built.api({ method: 'POST', url: '/api/v1/channels', headers: bearer(ws.primary.key), payload: { name: 'room' } })).json().id as string
  for (const id of [me.id, ws.agents[1]!.id]) {
    await built.api({ method: 'POST', url: `/api/v1/channels/${room}/members`, headers: bearer(ws.primary.key), payload: { user_id: id } })
  }
  await postIn(built.api, me.key, room, 'an old post of mine') // history
  return { ...built, ws, me, room }
}

/** What others do meanwhile: chatter, then the mention. */
async function othersPost(api: Api, ws: Workspace, room: string): Promise<string> {
  await postIn(api, ws.agents[1]!.key, room, 'chatter that must not wake anyone')
  return (await postIn(api, ws.primary.key, room, `@${ws.agents[0]!.name} can you check the deploy?`)).id
}

async function replyLanded(t: Test, api: Api, ws: Workspace, room: string, mentionId: string, text: string): Promise<void> {
  const replies = (await api({ method: 'GET', url: `/api/v1/channels/${room}/messages/${mentionId}/replies`, headers: bearer(ws.primary.key) })).json()
  t.same(
    replies.messages.map((m: any) => [m.text, m.thread_id, m.author_id]),
    [[text, mentionId, ws.agents[0]!.id]],
    'the reply is in the mention’s thread',
  )
}

const replyOver = (api: Api, token: string, room: string, threadId: string, text: string) => postIn(api, token, room, text, { thread_id: threadId })

t.test('long poll: one waiting GET, one reply', async (t) => {
  const { app, api, ws, me, room } = await setup(t)
  const calls = new Calls()
  const waiting = calls.count(() => api({ method: 'GET', url: '/api/v1/events?since=now&only=addressed&include_own_messages=false&wait=30', headers: bearer(me.key) }))
  for (let i = 0; i < 500 && app.eventStreams.open.polls < 1; i++) await new Promise((r) => setTimeout(r, 10))
  const mentionId = await othersPost(api, ws, room)
  const page = (await waiting).json()
  t.same(
    page.events.map((e: any) => [e.type, e.message.id]),
    [['new_message', mentionId]],
  )
  await calls.count(() => replyOver(api, me.key, room, page.events[0].message.id, 'on it (long poll)'))
  t.equal(calls.n, 2, 'two calls')
  await replyLanded(t, api, ws, room, mentionId, 'on it (long poll)')
})

t.test('SSE: one stream, one reply', async (t) => {
  const { app, api, ws, me, room } = await setup(t)
  const calls = new Calls()
  const stream = await calls.count(() => SseClient.open(streamUrl(baseUrl(app), { since: 'now', only: 'addressed' }), bearer(me.key)))
  await stream.type('ready')
  const mentionId = await othersPost(api, ws, room)
  const frame = await stream.type('new_message')
  t.equal(frame.message.id, mentionId)
  await calls.count(() => replyOver(api, me.key, room, frame.message.id, 'on it (SSE)'))
  t.equal(calls.n, 2, 'two calls')
  t.same(
    stream.logEvents().map((e) => e.message?.id),
    [mentionId],
    'nothing else arrived: not the chatter, not its own reply',
  )
  await stream.close()
  await replyLanded(t, api, ws, room, mentionId, 'on it (SSE)')
})

t.test('WebSocket: one socket, one send_message', async (t) => {
  const { app, api, ws, me, room } = await setup(t)
  const calls = new Calls()
  const { client } = await calls.count(() => connect(app, me.key, { only: 'addressed', include_own_messages: 'false' }))
  const mentionId = await othersPost(api, ws, room)
  const frame = await client.type('new_message')
  t.equal(frame.message.id, mentionId)
  calls.n += 1
  client.send({ type: 'send_message', id: 'r1', channel_id: room, text: 'on it (WebSocket)', thread_id: frame.message.id })
  const ack = await client.type('ack')
  t.equal(ack.message.thread_id, mentionId)
  t.equal(calls.n, 2, 'two calls')
  t.same(
    client.events().map((e) => e.message?.id),
    [mentionId],
    'nothing else arrived',
  )
  await client.close()
  await replyLanded(t, api, ws, room, mentionId, 'on it (WebSocket)')
})

t.test('MCP: wait_for_events then post_message; wait_for_inbox then post_message', async (t) => {
  const { app, api, ws, me, room } = await setup(t)
  const { client } = await connectClient(t, baseUrl(app), me.key)
  const parked = async (): Promise<void> => {
    for (let i = 0; i < 500 && app.mcp.inbox.size < 1 && app.inboxBell.waiting < 1; i++) await new Promise((r) => setTimeout(r, 10))
  }

  const calls = new Calls()
  const waiting = calls.count(() => call(client, 'wait_for_events', { only: 'addressed', include_own_messages: false, timeout_seconds: 30 }))
  await parked()
  const mentionId = await othersPost(api, ws, room)
  const events = structured(await waiting).events
  t.same(
    events.map((e: any) => [e.type, e.message.id]),
    [['new_message', mentionId]],
  )
  const posted = await calls.count(() => call(client, 'post_message', { channel: room, text: 'on it (MCP)', thread_id: events[0].message.id }))
  t.notOk(posted.isError)
  t.equal(calls.n, 2, 'two calls')
  await replyLanded(t, api, ws, room, mentionId, 'on it (MCP)')

  // The durable way: the inbox. The first mention is still unacknowledged: acknowledge it first
  // (handled above), then wait for the next one.
  // The inbox is written by the delivery planner, after the event that woke wait_for_events: on a
  // busy machine the first read can come before it.
  let pending = structured(await call(client, 'read_inbox', {}))
  for (let i = 0; i < 200 && !pending.items.some((item: any) => item.message?.id === mentionId); i++) {
    await new Promise((r) => setTimeout(r, 25))
    pending = structured(await call(client, 'read_inbox', {}))
  }
  t.ok(
    pending.items.some((item: any) => item.message?.id === mentionId),
    'the first mention is in the inbox',
  )
  await call(client, 'ack_inbox', { up_to: pending.next_cursor })
  const inboxCalls = new Calls()
  const inboxWait = inboxCalls.count(() => call(client, 'wait_for_inbox', { timeout_seconds: 30 }))
  await parked()
  const second = await postIn(api, ws.primary.key, room, `@${me.name} and this one?`)
  const page = structured(await inboxWait)
  t.same(
    page.items.map((i: any) => [i.kind, i.message.id]),
    [['mention', second.id]],
  )
  await inboxCalls.count(() => call(client, 'post_message', { channel: room, text: 'done', thread_id: page.items[0].message.id }))
  t.equal(inboxCalls.n, 2, 'two calls to reply (acknowledging is a third when the agent wants it durable)')
})
