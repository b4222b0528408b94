// Streaming messages on the WebSocket and SSE (issue 25): two humans and an agent watch a stream
// in a channel and in a thread (message_stream_started, message_delta with sequence numbers and
// offsets, message_stream_finished, then new_message), a late joiner rebuilds the text from the
// message so far plus the deltas, a non-member receives nothing, deltas are never in the event
// log, and Stop reaches the streaming agent on its socket and its SSE stream.
import t from 'tap'
import { setup, type Ctx } from '../conversations/fixtures/support.ts'
import { addMember, bearer, createChannel, post, untilPlanned } from '../support/index.ts'
import { connect, listen, type Frame } from './helpers.ts'
import { baseUrl, openStream } from './sse-client.ts'
import { expireThreadStatuses } from '../../src/modules/streams/thread-status.ts'

type Json = Record<string, any>
const url = (ch: string, m?: string, tail = '') => `/api/v1/channels/${ch}/messages${m ? `/${m}` : ''}${tail}`

/** A watcher's view of one streaming message, built from its frames only. */
function rebuild(frames: Frame[], messageId: string, from = ''): { text: string; seqs: number[] } {
  let text = from
  const seqs: number[] = []
  for (const f of frames) {
    if (f.type === 'message_stream_started' && f.message.id === messageId) text = f.message.text
    if (f.type === 'message_delta' && f.message_id === messageId) {
      if (f.offset > text.length) throw new Error(`gap at ${f.offset} (have ${text.length})`)
      text = text.slice(0, f.offset) + f.text
      seqs.push(f.seq)
    }
  }
  return { text, seqs }
}

async function appendAll(c: Ctx, ch: string, m: string, parts: string[]): Promise<void> {
  for (const part of parts) {
    const res = await c.api({ method: 'POST', url: url(ch, m, '/stream'), headers: bearer(c.tok.a1), payload: { append: part } })
    if (res.statusCode !== 200) throw new Error(`append: ${res.statusCode} ${res.body}`)
    await new Promise((r) => setTimeout(r, 30))
  }
}

t.test('two humans and an agent watch a stream in a channel and in a thread; a late joiner; a non-member sees nothing', async (t) => {
  const c = await setup(t)
  await listen(c.app)
  const ch = await createChannel(c.api, c.tok.a1, 'watch')
  for (const id of [c.ws.agents[1]!.id, c.ws.member.id, c.ws.observer.id]) await addMember(c.api, c.tok.a1, ch.id, id)

  const human = (await connect(c.app, c.tok.member)).client
  const agent = (await connect(c.app, c.tok.a2)).client
  const stranger = (await connect(c.app, c.tok.primary)).client
  const author = (await connect(c.app, c.tok.a1)).client
  const { stream: sse } = await openStream(baseUrl(c.app), c.tok.observer)
  t.teardown(async () => {
    for (const w of [human, agent, stranger, author]) await w.close()
    await sse.close()
  })

  const parts = ['The ', 'answer ', 'is ', '42 🎉', ', ', 'probably', '.']
  const m = (await c.api({ method: 'POST', url: url(ch.id), headers: bearer(c.tok.a1), payload: { stream: true, text: 'Hmm. ' } })).json()
  await human.type('message_stream_started')
  await appendAll(c, ch.id, m.id, parts.slice(0, 3))

  // A late joiner: reads the message (the text so far), then applies the deltas that go beyond it.
  const late = (await connect(c.app, c.tok.member)).client
  t.teardown(() => late.close().then(() => {}))
  const soFar = (await c.api({ method: 'GET', url: url(ch.id, m.id), headers: bearer(c.tok.member) })).json()
  t.equal(soFar.text, 'Hmm. The answer is ')
  await appendAll(c, ch.id, m.id, parts.slice(3))
  const final = 'Hmm. The answer is 42 🎉, probably.'
  const done = (await c.api({ method: 'POST', url: url(ch.id, m.id, '/stream/finish'), headers: bearer(c.tok.a1), payload: {} })).json()
  t.equal(done.text, final)

  for (const [who, w] of [
    ['human', human],
    ['agent', agent],
    ['late joiner', late],
  ] as const) {
    const finished = await w.type('message_stream_finished', (f) => f.message.id === m.id)
    t.same(finished.message, done, `${who}: the finished message`)
    const created = await w.type('new_message', (f) => f.message.id === m.id)
    t.same(created.message, done, `${who}: then new_message, once`)
  }
  for (const [who, w] of [
    ['human', human],
    ['agent', agent],
  ] as const) {
    const view = rebuild(w.frames, m.id)
    t.equal(view.text, final, `${who}: the deltas rebuild the exact text`)
    t.same(
      view.seqs,
      [...view.seqs].sort((a, b) => a - b),
      `${who}: sequence numbers in order`,
    )
    t.equal(view.seqs.at(-1), parts.length, `${who}: the last append's number`)
    const deltas = w.frames.filter((f) => f.type === 'message_delta')
    t.same(Object.keys(deltas[0]!).sort(), ['channel_id', 'message_id', 'offset', 'seq', 'text', 'thread_id', 'type'])
  }
  const lateFrames = late.frames.filter((f) => f.type === 'message_delta' && f.message_id === m.id)
  t.equal(rebuild(lateFrames, m.id, soFar.text).text, final, 'the late joiner: the text so far plus the deltas')
  const sseFrames = sse.events.map((e) => e.data)
  t.equal(rebuild(sseFrames, m.id).text, final, 'SSE: the same deltas')
  t.same(
    sse.events.filter((e) => e.event === 'message_delta').map((e) => e.id),
    sse.events.filter((e) => e.event === 'message_delta').map(() => undefined),
    'SSE deltas carry no id (Last-Event-ID stays that of the last event)',
  )
  t.equal(
    author.frames.some((f) => f.type === 'message_delta'),
    false,
    'the author gets no deltas of its own stream',
  )

  // A stream in a thread.
  const root = await post(c.api, c.tok.member, ch.id, 'and in a thread?')
  const r = (await c.api({ method: 'POST', url: url(ch.id), headers: bearer(c.tok.a1), payload: { stream: true, text: '', thread_id: root.id } })).json()
  await appendAll(c, ch.id, r.id, ['in ', 'the thread'])
  const threadDelta = await human.type('message_delta', (f) => f.message_id === r.id)
  t.equal(threadDelta.thread_id, root.id)
  await c.api({ method: 'POST', url: url(ch.id, r.id, '/stream/finish'), headers: bearer(c.tok.a1), payload: {} })
  await agent.type('new_message', (f) => f.message.id === r.id)
  t.equal(rebuild(agent.frames, r.id).text, 'in the thread')

  // The stranger's socket answers a ping after all of it: nothing of the channel came.
  stranger.send({ type: 'ping', id: 'after' })
  await stranger.type('pong')
  t.same(
    stranger.frames.filter((f) => f.channel_id === ch.id || f.message?.channel_id === ch.id),
    [],
    'a non-member receives nothing',
  )
  // Deltas are not events: the log has the start, the end and new_message only.
  const log = (await c.api({ method: 'GET', url: '/api/v1/events?limit=500', headers: bearer(c.tok.member) })).json()
  t.same(
    log.events.filter((f: Json) => f.message?.id === m.id).map((f: Json) => f.type),
    ['message_stream_started', 'message_stream_finished', 'new_message'],
  )
})

t.test('status reaches watchers; Stop reaches the streaming agent on its WebSocket and its SSE stream', async (t) => {
  const c = await setup(t)
  await listen(c.app)
  const ch = await createChannel(c.api, c.tok.a1, 'stop')
  await addMember(c.api, c.tok.a1, ch.id, c.ws.member.id)
  const ws = (await connect(c.app, c.tok.a1)).client
  const { stream: sse } = await openStream(baseUrl(c.app), c.tok.a1)
  t.teardown(async () => {
    await ws.close()
    await sse.close()
  })
  const m = (await c.api({ method: 'POST', url: url(ch.id), headers: bearer(c.tok.a1), payload: { stream: true, text: 'working' } })).json()
  const res = await c.api({ method: 'POST', url: url(ch.id, m.id, '/stream/stop'), headers: bearer(c.tok.member) })
  t.equal(res.statusCode, 200)
  // The agent's status reaches the human's socket and SSE stream (as deltas do).
  const human = (await connect(c.app, c.tok.member)).client
  const { stream: humanSse } = await openStream(baseUrl(c.app), c.tok.member)
  t.teardown(async () => {
    await human.close()
    await humanSse.close()
  })
  const status = { title: 'Thinking', steps: [{ title: 'Plan', state: 'in_progress' }] }
  t.equal((await c.api({ method: 'PUT', url: url(ch.id, m.id, '/stream/status'), headers: bearer(c.tok.a1), payload: status })).statusCode, 200)
  const frame = { type: 'message_status', channel_id: ch.id, message_id: m.id, thread_id: null, status }
  t.same(await human.type('message_status'), frame, 'WebSocket: message_status')
  t.same(await humanSse.type('message_status'), frame, 'SSE: message_status')
  const expected = { message_id: m.id, channel_id: ch.id, thread_id: null, author_id: c.ws.agents[0]!.id, requested_by_id: c.ws.member.id, requested_by_name: 'member' }
  t.match(await ws.type('message_stop_requested'), expected, 'WebSocket')
  t.match(await sse.type('message_stop_requested'), expected, 'SSE')
  const cancelled = (await c.api({ method: 'POST', url: url(ch.id, m.id, '/stream/cancel'), headers: bearer(c.tok.a1) })).json()
  t.equal((await ws.type('message_stream_finished')).message.stream_state, 'cancelled')
  t.equal(cancelled.stream_state, 'cancelled')
})

t.test('WebSocket frames: stream_start, stream_append, stream_finish, stream_cancel with their acks; refusals as error frames', async (t) => {
  const c = await setup(t)
  await listen(c.app)
  const ch = await createChannel(c.api, c.tok.a1, 'frames')
  await addMember(c.api, c.tok.a1, ch.id, c.ws.member.id)
  await addMember(c.api, c.tok.a1, ch.id, c.ws.agents[1]!.id)
  const ws = (await connect(c.app, c.tok.a1)).client
  const watcher = (await connect(c.app, c.tok.member)).client
  const intruder = (await connect(c.app, c.tok.a2)).client
  t.teardown(async () => {
    for (const w of [ws, watcher, intruder]) await w.close()
  })

  ws.send({ type: 'stream_start', id: 's1', channel_id: ch.id, text: 'On it' })
  const ack = await ws.type('ack', (f) => f.id === 's1')
  t.match(ack.message, { channel_id: ch.id, stream_state: 'streaming', text: 'On it' })
  const id = ack.message.id
  ws.send({ type: 'stream_append', id: 'a1', channel_id: ch.id, message_id: id, append: ': step one' })
  ws.send({ type: 'stream_append', client_id: 'a2', channel_id: ch.id, message_id: id, appends: [', step two', ', done'] })
  t.same(await ws.type('stream_ack', (f) => f.id === 'a1'), { type: 'stream_ack', id: 'a1', message_id: id, seq: 1, length: 'On it: step one'.length })
  t.same(await ws.type('stream_ack', (f) => f.client_id === 'a2'), { type: 'stream_ack', id: 'a2', client_id: 'a2', message_id: id, seq: 3, length: 'On it: step one, step two, done'.length })

  // Refusals answer an error frame naming the frame; the stream stays as it was.
  ws.send({ type: 'stream_append', id: 'bad1', channel_id: ch.id, message_id: id, append: 'x', appends: ['y'] })
  ws.send({ type: 'stream_append', id: 'bad2', channel_id: ch.id, message_id: id })
  ws.send({ type: 'stream_append', id: 'bad3', channel_id: ch.id, message_id: 'nope', append: 'x' })
  intruder.send({ type: 'stream_append', id: 'bad4', channel_id: ch.id, message_id: id, append: 'x' })
  intruder.send({ type: 'stream_start', id: 'bad5', channel_id: ch.id })
  for (const [who, fid, code] of [
    [ws, 'bad1', 'VALIDATION_ERROR'],
    [ws, 'bad2', 'VALIDATION_ERROR'],
    [ws, 'bad3', 'VALIDATION_ERROR'],
    [intruder, 'bad4', 'FORBIDDEN'],
  ] as const) {
    t.match(await who.type('error', (f) => f.id === fid), { code }, fid)
  }
  const other = await intruder.type('ack', (f) => f.id === 'bad5')
  t.equal(other.message.stream_state, 'streaming', 'another agent starts its own')

  ws.send({ type: 'stream_finish', id: 'f1', channel_id: ch.id, message_id: id })
  const fin = await ws.type('ack', (f) => f.id === 'f1')
  t.match(fin.message, { id, stream_state: 'complete', text: 'On it: step one, step two, done' })
  ws.send({ type: 'stream_finish', id: 'f2', channel_id: ch.id, message_id: id })
  t.match(await ws.type('error', (f) => f.id === 'f2'), { code: 'STREAM_ENDED' })
  intruder.send({ type: 'stream_cancel', id: 'c1', channel_id: ch.id, message_id: other.message.id })
  t.equal((await intruder.type('ack', (f) => f.id === 'c1')).message.stream_state, 'cancelled')

  await watcher.type('new_message', (f) => f.message.id === id)
  t.equal(rebuild(watcher.frames, id).text, 'On it: step one, step two, done', 'a watcher saw it grow')
})

t.test('a status on a thread without a stream: pushed to watchers, read by a late joiner, cleared by the agent, by its reply, and when idle', async (t) => {
  const c = await setup(t)
  await listen(c.app)
  const ch = await createChannel(c.api, c.tok.a1, 'thread-status')
  for (const id of [c.ws.member.id, c.ws.observer.id]) await addMember(c.api, c.tok.a1, ch.id, id)
  const root = await post(c.api, c.tok.member, ch.id, 'can someone look at the logs?')
  const human = (await connect(c.app, c.tok.member)).client
  const { stream: sse } = await openStream(baseUrl(c.app), c.tok.observer)
  t.teardown(async () => {
    await human.close()
    await sse.close()
  })
  const path = (m = root.id) => url(ch.id, m, '/thread/status')
  const put = (token: string, body: Json, m = root.id) => c.api({ method: 'PUT', url: path(m), headers: bearer(token), payload: body })
  const read = async (token = c.tok.observer) => (await c.api({ method: 'GET', url: path(), headers: bearer(token) })).json()
  const status = { title: 'Reading the logs…', steps: [{ title: 'Open the logs', state: 'in_progress' }] }
  const replyAs = async (token: string, text: string): Promise<Json> => {
    const res = await c.api({ method: 'POST', url: url(ch.id), headers: bearer(token), payload: { text, thread_id: root.id } })
    if (res.statusCode !== 201) throw new Error(`reply: ${res.statusCode} ${res.body}`)
    return res.json()
  }

  const res = await put(c.tok.a1, status)
  t.equal(res.statusCode, 200)
  const body = res.json()
  t.match(body, { channel_id: ch.id, thread_id: root.id, statuses: [{ agent_id: c.ws.agents[0]!.id, agent_name: String, status }] })
  t.same(Object.keys(body.statuses[0]).sort(), ['agent_id', 'agent_name', 'status', 'updated_at'])
  const frame = { type: 'thread_status', channel_id: ch.id, thread_id: root.id, agent_id: c.ws.agents[0]!.id, agent_name: body.statuses[0].agent_name, status }
  t.same(await human.type('thread_status'), frame, 'WebSocket: thread_status')
  t.same(await sse.type('thread_status'), frame, 'SSE: thread_status')
  t.same(await read(), body, 'a late joiner reads it')

  // Refusals change nothing.
  const reply = await replyAs(c.tok.member, 'a reply')
  const outsider = await createChannel(c.api, c.tok.a2, 'outside')
  for (const [what, r, code] of [
    ['a person', await put(c.tok.member, status), 403],
    ['an agent not in the channel', await put(c.tok.a2, status), 404],
    ['a reply, not a root', await put(c.tok.a1, status, reply.id), 400],
    ['a bad step state', await put(c.tok.a1, { title: 'x', steps: [{ title: 'y', state: 'done' }] }), 400],
    ['another channel', await c.api({ method: 'PUT', url: url(outsider.id, root.id, '/thread/status'), headers: bearer(c.tok.a2), payload: status }), 404],
  ] as const) {
    t.equal(r.statusCode, code, what)
  }
  t.same(await read(), body, 'unchanged')

  // The agent's reply in the thread clears it.
  await replyAs(c.tok.a1, 'the disk is full')
  const cleared = { ...frame, status: null }
  t.same(await human.type('thread_status', (f) => f.status === null), cleared, 'cleared by the reply')
  t.same((await read()).statuses, [])

  // DELETE clears it; clearing again is fine.
  await put(c.tok.a1, status)
  human.frames.length = 0
  t.equal((await c.api({ method: 'DELETE', url: path(), headers: bearer(c.tok.a1) })).statusCode, 204)
  t.same(await human.type('thread_status', (f) => f.status === null), cleared, 'cleared by DELETE')
  t.equal((await c.api({ method: 'DELETE', url: path(), headers: bearer(c.tok.a1) })).statusCode, 204)
  t.same((await read()).statuses, [])

  // Starting a streamed reply in the thread clears it too.
  await put(c.tok.a1, status)
  human.frames.length = 0
  const streamed = (await c.api({ method: 'POST', url: url(ch.id), headers: bearer(c.tok.a1), payload: { stream: true, text: '', thread_id: root.id } })).json()
  t.equal(streamed.stream_state, 'streaming')
  t.same(await human.type('thread_status', (f) => f.status === null), cleared, 'cleared by a streamed reply')
  await c.api({ method: 'POST', url: url(ch.id, streamed.id, '/stream/cancel'), headers: bearer(c.tok.a1) })

  // Left unchanged for STREAM_IDLE_SECONDS: the sweep clears it.
  await put(c.tok.a1, status)
  human.frames.length = 0
  t.equal(await expireThreadStatuses(c.app.ctx, Date.now() + 60_000), 0, 'not yet')
  t.equal(await expireThreadStatuses(c.app.ctx, Date.now() + c.config.streamIdleSeconds * 1000 + 1000), 1)
  t.same(await human.type('thread_status', (f) => f.status === null), cleared, 'cleared when idle')
  t.same((await read()).statuses, [])
})

t.test('Stop is an inbox item of the streaming agent (kind stop), read over REST and MCP-style, not of anyone else; only=addressed sockets get it', async (t) => {
  const c = await setup(t)
  await listen(c.app)
  const ch = await createChannel(c.api, c.tok.a1, 'stop-inbox')
  for (const id of [c.ws.member.id, c.ws.agents[1]!.id]) await addMember(c.api, c.tok.a1, ch.id, id)
  const addressedOnly = (await connect(c.app, c.tok.a1, { only: 'addressed' })).client
  t.teardown(() => addressedOnly.close().then(() => {}))
  const m = (await c.api({ method: 'POST', url: url(ch.id), headers: bearer(c.tok.a1), payload: { stream: true, text: 'long job' } })).json()
  t.equal((await c.api({ method: 'POST', url: url(ch.id, m.id, '/stream/stop'), headers: bearer(c.tok.member) })).statusCode, 200)
  const payload = { message_id: m.id, channel_id: ch.id, thread_id: null, author_id: c.ws.agents[0]!.id, requested_by_id: c.ws.member.id, requested_by_name: 'member' }
  t.match(await addressedOnly.type('message_stop_requested'), payload, 'a socket with only=addressed gets it: it is addressed to the agent')

  await untilPlanned(c.app)
  const inbox = async (token: string) => (await c.api({ method: 'GET', url: '/api/v1/inbox', headers: bearer(token) })).json()
  const page = await inbox(c.tok.a1)
  t.same(page.counts.by_kind, { mention: 0, dm: 0, thread_reply: 0, reaction: 0, approval: 0, stop: 1 })
  t.equal(page.items.length, 1)
  const [item] = page.items
  t.match(item, { kind: 'stop', event_type: 'message_stop_requested', channel_id: ch.id, message: null, reaction: null, approval: null, stop: payload })
  t.same(Object.keys(item).sort(), ['approval', 'channel_id', 'event_id', 'id', 'kind', 'message', 'occurred_at', 'reaction', 'stop', 'event_type'].sort())
  for (const token of [c.tok.member, c.tok.a2]) t.equal((await inbox(token)).counts.by_kind.stop, 0, 'nobody else is asked to stop')

  // A second Stop adds nothing; acknowledging clears it.
  await c.api({ method: 'POST', url: url(ch.id, m.id, '/stream/stop'), headers: bearer(c.tok.member) })
  await untilPlanned(c.app)
  t.equal((await inbox(c.tok.a1)).items.length, 1)
  t.equal((await c.api({ method: 'POST', url: '/api/v1/inbox/ack', headers: bearer(c.tok.a1), payload: { up_to: item.id } })).statusCode, 200)
  t.same((await inbox(c.tok.a1)).items, [])
})
