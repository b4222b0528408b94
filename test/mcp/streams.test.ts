// Streaming messages through the MCP tools (issue 25): start_stream, append_stream, finish_stream
// (and cancel), the text so far for a reader, Stop reaching the agent through wait_for_events, and
// the REST refusals as tool errors that change nothing.
import t from 'tap'
import { call, connectClient, setup, structured, textOf } from './helpers.ts'
import { bearer, untilPlanned } from '../support/index.ts'

t.test('an agent streams over MCP; a person stops it; it finishes; refusals are tool errors', async (t) => {
  const ctx = await setup(t)
  const [agent1, agent2] = ctx.ws.agents as [(typeof ctx.ws.agents)[0], (typeof ctx.ws.agents)[0]]
  const created = await ctx.api({ method: 'POST', url: '/api/v1/channels', headers: bearer(agent1.key), payload: { name: 'live', description: 'live answers' } })
  const ch = created.json().id as string
  for (const user_id of [agent2.id, ctx.ws.member.id]) await ctx.api({ method: 'POST', url: `/api/v1/channels/${ch}/members`, headers: bearer(agent1.key), payload: { user_id } })
  const { client } = await connectClient(t, ctx.base, agent1.key)
  const other = (await connectClient(t, ctx.base, agent2.key, 'modern')).client
  const cursor = structured(await call(client, 'wait_for_events', { timeout_seconds: 0 })).next_cursor

  const start = await call(client, 'start_stream', { channel: '#live', text: 'Searching' })
  t.notOk(start.isError)
  const m = structured(start).message
  t.match(m, { channel_id: ch, stream_state: 'streaming', text: 'Searching' })
  t.match(textOf(start), `message_id ${m.id}`)
  t.same(structured(await call(client, 'append_stream', { channel: ch, message_id: m.id, text: ' the docs' })), { message_id: m.id, seq: 1, length: 'Searching the docs'.length })
  const status = await call(client, 'set_status', { channel: ch, message_id: m.id, title: 'Searching the docs…', steps: [{ title: 'Search', state: 'in_progress' }] })
  t.notOk(status.isError)
  t.same(structured(status), {
    message_id: m.id,
    stream_state: 'streaming',
    seq: 1,
    status: { title: 'Searching the docs…', steps: [{ title: 'Search', state: 'in_progress' }] },
    stop_requested: false,
  })
  t.match(textOf(status), 'Searching the docs… (… Search)')
  const read = structured(await call(other, 'read_messages', { channel: ch }))
  t.match(read.messages.at(-1), { id: m.id, text: 'Searching the docs', stream_state: 'streaming' }, 'a reader sees the text so far')

  // Refusals: tool errors, nothing changed.
  t.equal(structured(await call(other, 'append_stream', { channel: ch, message_id: m.id, text: 'x' })).code, 'FORBIDDEN')
  t.equal(structured(await call(other, 'finish_stream', { channel: ch, message_id: m.id })).code, 'FORBIDDEN')
  t.equal(structured(await call(client, 'append_stream', { channel: ch, message_id: m.id, text: 'é'.repeat(9000) })).code, 'STREAM_TOO_LONG', 'over 16 KiB in UTF-8')

  // A person presses Stop: the agent's event wait gets it.
  const stop = await ctx.api({ method: 'POST', url: `/api/v1/channels/${ch}/messages/${m.id}/stream/stop`, headers: bearer(ctx.ws.member.token) })
  t.equal(stop.statusCode, 200)
  const waited = await call(client, 'wait_for_events', { cursor, timeout_seconds: 5 })
  const stopEvent = structured(waited).events.find((e: { type: string }) => e.type === 'message_stop_requested')
  t.match(stopEvent, { message_id: m.id, author_id: agent1.id, requested_by_id: ctx.ws.member.id })
  t.match(textOf(waited), 'finish_stream or cancel it')
  // And as an inbox item (kind stop), for an agent that works from its inbox.
  await untilPlanned(ctx.app)
  const inboxRead = await call(client, 'read_inbox', {})
  t.notOk(inboxRead.isError)
  t.match(structured(inboxRead).items, [{ kind: 'stop', event_type: 'message_stop_requested', stop: { message_id: m.id, requested_by_id: ctx.ws.member.id } }])
  t.match(textOf(inboxRead), `[stop] in ${ch}: member (${ctx.ws.member.id}) asks you to stop streaming msg ${m.id}: finish_stream or cancel it`)

  const fin = await call(client, 'finish_stream', { channel: ch, message_id: m.id, text: 'Found it: see the docs.' })
  t.notOk(fin.isError)
  t.match(structured(fin).message, { id: m.id, stream_state: 'complete', text: 'Found it: see the docs.' })
  t.equal(structured(await call(client, 'append_stream', { channel: ch, message_id: m.id, text: 'late' })).code, 'STREAM_ENDED')

  // Cancel keeps what was written.
  const second = structured(await call(client, 'start_stream', { channel: ch })).message
  await call(client, 'append_stream', { channel: ch, message_id: second.id, text: 'half' })
  t.match(structured(await call(client, 'finish_stream', { channel: ch, message_id: second.id, cancel: true })).message, { stream_state: 'cancelled', text: 'half' })

  // A person cannot stream.
  const human = (await connectClient(t, ctx.base, ctx.ws.member.token)).client
  t.equal(structured(await call(human, 'start_stream', { channel: ch })).code, 'FORBIDDEN')
})

t.test('set_status on a thread without a stream: set, read over REST, cleared with clear: true; refusals are tool errors', async (t) => {
  const ctx = await setup(t)
  const [agent1] = ctx.ws.agents as [(typeof ctx.ws.agents)[0]]
  const ch = (await ctx.api({ method: 'POST', url: '/api/v1/channels', headers: bearer(agent1.key), payload: { name: 'ask' } })).json().id as string
  await ctx.api({ method: 'POST', url: `/api/v1/channels/${ch}/members`, headers: bearer(agent1.key), payload: { user_id: ctx.ws.member.id } })
  const root = (await ctx.api({ method: 'POST', url: `/api/v1/channels/${ch}/messages`, headers: bearer(ctx.ws.member.token), payload: { text: 'why is it slow?' } })).json()
  const { client } = await connectClient(t, ctx.base, agent1.key)
  const read = async () => (await ctx.api({ method: 'GET', url: `/api/v1/channels/${ch}/messages/${root.id}/thread/status`, headers: bearer(ctx.ws.member.token) })).json()

  const set = await call(client, 'set_status', { channel: ch, thread_id: root.id, title: 'Profiling…', steps: [{ title: 'Collect a profile', state: 'in_progress' }] })
  t.notOk(set.isError)
  t.equal(textOf(set), 'Status: Profiling… (… Collect a profile)')
  const status = { title: 'Profiling…', steps: [{ title: 'Collect a profile', state: 'in_progress' }] }
  t.match(structured(set), { channel_id: ch, thread_id: root.id, statuses: [{ agent_id: agent1.id, status }] })
  t.same(await read(), structured(set), 'what REST shows')

  for (const [what, args, code] of [
    ['both ids', { channel: ch, thread_id: root.id, message_id: root.id, title: 'x' }, 'VALIDATION_ERROR'],
    ['neither id', { channel: ch, title: 'x' }, 'VALIDATION_ERROR'],
    ['no title', { channel: ch, thread_id: root.id }, 'VALIDATION_ERROR'],
    ['clear on a stream', { channel: ch, message_id: root.id, clear: true }, 'VALIDATION_ERROR'],
  ] as const) {
    t.equal(structured(await call(client, 'set_status', args)).code, code, what)
  }
  t.same((await read()).statuses.length, 1, 'unchanged')

  const cleared = await call(client, 'set_status', { channel: ch, thread_id: root.id, clear: true })
  t.notOk(cleared.isError)
  t.same(structured(cleared), { channel_id: ch, thread_id: root.id, statuses: [] })
  t.same((await read()).statuses, [])
})
