// Streaming messages over REST (issue 25): start, append (one and batches), the text so far in
// history, finish, cancel, Stop, the events each logs, every refusal (and that it changes
// nothing), the limits, threads and mentions, and the sweep that interrupts idle, stopped and
// orphaned streams (an instance that died), with an injected clock.
import t from 'tap'
import { readdir } from 'node:fs/promises'
import { multipart, setup, type Ctx } from './fixtures/support.ts'
import { addMember, bearer, build, createChannel, MESSAGE_KEYS, post } from '../support/index.ts'
import { sweepStreams } from '../../src/modules/streams/service.ts'
import { MAX_APPEND_BYTES, MAX_CONCURRENT_STREAMS } from '../../src/modules/streams/schemas.ts'

type Json = Record<string, any>

const url = (ch: string, m?: string, tail = '') => `/api/v1/channels/${ch}/messages${m ? `/${m}` : ''}${tail}`

async function start(c: Ctx, token: string, ch: string, body: Json = { text: '' }) {
  return c.api({ method: 'POST', url: url(ch), headers: bearer(token), payload: { stream: true, ...body } })
}
async function started(c: Ctx, token: string, ch: string, body: Json = { text: '' }): Promise<Json> {
  const res = await start(c, token, ch, body)
  if (res.statusCode !== 201) throw new Error(`start: ${res.statusCode} ${res.body}`)
  return res.json()
}
const append = (c: Ctx, token: string, ch: string, m: string, body: Json) => c.api({ method: 'POST', url: url(ch, m, '/stream'), headers: bearer(token), payload: body })
const finish = (c: Ctx, token: string, ch: string, m: string, body: Json = {}) => c.api({ method: 'POST', url: url(ch, m, '/stream/finish'), headers: bearer(token), payload: body })
const cancel = (c: Ctx, token: string, ch: string, m: string) => c.api({ method: 'POST', url: url(ch, m, '/stream/cancel'), headers: bearer(token) })
const stop = (c: Ctx, token: string, ch: string, m: string) => c.api({ method: 'POST', url: url(ch, m, '/stream/stop'), headers: bearer(token) })
const getMessage = async (c: Ctx, token: string, ch: string, m: string): Promise<Json> => (await c.api({ method: 'GET', url: url(ch, m), headers: bearer(token) })).json()

async function channel(c: Ctx, name: string) {
  const ch = await createChannel(c.api, c.tok.a1, name)
  for (const id of [c.ws.agents[1]!.id, c.ws.member.id, c.ws.observer.id]) await addMember(c.api, c.tok.a1, ch.id, id)
  return ch
}

t.test('an agent streams a message: start, appends, the text so far in history, finish; events: started, then finished and message.created once', async (t) => {
  const c = await setup(t)
  const ch = await channel(c, 'live')
  c.events.length = 0

  const res = await start(c, c.tok.a1, ch.id, { text: 'Looking' })
  t.equal(res.statusCode, 201)
  const m = res.json()
  t.same(Object.keys(m).sort(), MESSAGE_KEYS)
  t.equal(m.stream_state, 'streaming')
  t.equal(m.text, 'Looking')
  t.same(
    c.events.map((e) => [e.type, e.payload]),
    [['message.stream_started', { message: m }]],
    'only message.stream_started: no message.created while it streams',
  )

  const a1 = await append(c, c.tok.a1, ch.id, m.id, { append: ' it up' })
  t.equal(a1.statusCode, 200)
  t.same(a1.json(), { message_id: m.id, seq: 1, length: 'Looking it up'.length })
  const a2 = await append(c, c.tok.a1, ch.id, m.id, { appends: [' — ', 'found 🎉', '.'] })
  t.same(a2.json(), { message_id: m.id, seq: 4, length: 'Looking it up — found 🎉.'.length }, 'a batch takes one number per append; the length counts UTF-16 units')

  // History and a late joiner see the text so far.
  const so = await getMessage(c, c.tok.member, ch.id, m.id)
  t.equal(so.text, 'Looking it up — found 🎉.')
  t.equal(so.stream_state, 'streaming')
  const list = (await c.api({ method: 'GET', url: url(ch.id), headers: bearer(c.tok.member) })).json()
  t.same(list.messages[0], so, 'the channel list shows the streaming message as it is now')
  t.equal(c.events.length, 1, 'appends log no events')

  const fin = await finish(c, c.tok.a1, ch.id, m.id)
  t.equal(fin.statusCode, 200)
  const done = fin.json()
  t.equal(done.stream_state, 'complete')
  t.equal(done.text, 'Looking it up — found 🎉.')
  t.same(await getMessage(c, c.tok.member, ch.id, m.id), done)
  t.same(
    c.events.slice(1).map((e) => [e.type, e.payload]),
    [
      ['message.stream_finished', { message: done }],
      ['message.created', { message: done }],
    ],
  )
  t.equal(c.events[2]!.id, m.id, "message.created carries the message's own id, as a post's does")

  // Ended: nothing more changes it.
  for (const [what, res2] of [
    ['append', await append(c, c.tok.a1, ch.id, m.id, { append: 'more' })],
    ['finish', await finish(c, c.tok.a1, ch.id, m.id, { text: 'other' })],
    ['cancel', await cancel(c, c.tok.a1, ch.id, m.id)],
    ['stop', await stop(c, c.tok.member, ch.id, m.id)],
  ] as const) {
    t.equal(res2.statusCode, 409, what)
    t.equal(res2.json().code, 'STREAM_ENDED', what)
  }
  t.same(await getMessage(c, c.tok.member, ch.id, m.id), done, 'unchanged')
  t.equal(c.events.length, 3)

  // An ordinary message is complete, and is not a stream.
  const plain = await post(c.api, c.tok.member, ch.id, 'a plain message')
  t.equal(plain.stream_state, 'complete')
  const onPlain = await append(c, c.tok.a1, ch.id, plain.id, { append: 'x' })
  t.equal(onPlain.statusCode, 403, "another's message")
  const byAuthor = await append(c, c.tok.a1, ch.id, (await post(c.api, c.tok.a1, ch.id, 'posted whole')).id, { append: 'x' })
  t.equal(byAuthor.statusCode, 409)
  t.equal(byAuthor.json().code, 'STREAM_ENDED')
})

t.test('finish with a final text replaces the appended one; mentions and search take the final text', async (t) => {
  const c = await setup(t)
  const ch = await channel(c, 'final')
  const m = await started(c, c.tok.a1, ch.id)
  await append(c, c.tok.a1, ch.id, m.id, { append: 'draft words' })
  c.events.length = 0
  const done = (await finish(c, c.tok.a1, ch.id, m.id, { text: 'zebracorn answer for @agent-2' })).json()
  t.equal(done.text, 'zebracorn answer for @agent-2')
  t.same(done.mentions, [c.ws.agents[1]!.id])
  t.same(
    c.events.map((e) => e.type),
    ['message.stream_finished', 'message.created', 'message.mentioned'],
  )
  t.same(c.events[1]!.addressed, { [c.ws.agents[1]!.id]: 'mention' })
  const found = (await c.api({ method: 'GET', url: `/api/v1/messages/search?q=zebracorn`, headers: bearer(c.tok.member) })).json()
  t.same(
    found.results.map((r: Json) => r.id),
    [m.id],
  )
  const draft = (await c.api({ method: 'GET', url: `/api/v1/messages/search?q=draft`, headers: bearer(c.tok.member) })).json()
  t.same(draft.results, [], 'the appended text it replaced is not found')
})

t.test('cancel keeps what was written; a blank finish is refused and the stream stays open', async (t) => {
  const c = await setup(t)
  const ch = await channel(c, 'cancel')
  const m = await started(c, c.tok.a1, ch.id)
  const blank = await finish(c, c.tok.a1, ch.id, m.id)
  t.equal(blank.statusCode, 400)
  t.equal(blank.json().code, 'VALIDATION_ERROR')
  t.equal((await getMessage(c, c.tok.member, ch.id, m.id)).stream_state, 'streaming')
  await append(c, c.tok.a1, ch.id, m.id, { append: 'half an answ' })
  c.events.length = 0
  const res = await cancel(c, c.tok.a1, ch.id, m.id)
  t.equal(res.statusCode, 200)
  t.match(res.json(), { stream_state: 'cancelled', text: 'half an answ' })
  t.same(
    c.events.map((e) => e.type),
    ['message.stream_finished', 'message.created'],
  )
})

t.test('refusals answer 4xx {error, code} and change nothing', async (t) => {
  const c = await setup(t, { MAX_MESSAGE_LENGTH: '40' })
  const ch = await channel(c, 'refusals')
  const secret = await createChannel(c.api, c.tok.a2, 'secret')

  // Who may start one.
  let res = await start(c, c.tok.member, ch.id, { text: 'hi' })
  t.equal(res.statusCode, 403, 'a human posts whole')
  t.equal(res.json().code, 'FORBIDDEN')
  res = await start(c, c.tok.a1, secret.id)
  t.equal(res.statusCode, 404, 'a channel the agent cannot see')
  res = await start(c, c.tok.a1, ch.id, { text: 'x', mentions: [c.ws.member.id] })
  t.equal(res.statusCode, 400)
  res = await c.api({ method: 'POST', url: url(ch.id), headers: { ...bearer(c.tok.a1), 'idempotency-key': 'k1' }, payload: { stream: true, text: '' } })
  t.equal(res.statusCode, 400)
  res = await c.api({ method: 'POST', url: url(ch.id), headers: bearer(c.tok.a1), payload: { stream: true, text: '', thread_id: '00000000-0000-7000-8000-000000000000' } })
  t.equal(res.statusCode, 404)
  t.equal((await c.api({ method: 'GET', url: url(ch.id), headers: bearer(c.tok.member) })).json().messages.length, 0, 'nothing stored')

  const m = await started(c, c.tok.a1, ch.id, { text: 'start' })
  const before = await getMessage(c, c.tok.member, ch.id, m.id)
  c.events.length = 0
  const cases: [string, () => ReturnType<typeof append>, number, string][] = [
    ['not the author (an agent)', () => append(c, c.tok.a2, ch.id, m.id, { append: 'x' }), 403, 'FORBIDDEN'],
    ['not the author (a human)', () => append(c, c.tok.member, ch.id, m.id, { append: 'x' }), 403, 'FORBIDDEN'],
    ['finish by another', () => finish(c, c.tok.a2, ch.id, m.id), 403, 'FORBIDDEN'],
    ['cancel by another', () => cancel(c, c.tok.a2, ch.id, m.id), 403, 'FORBIDDEN'],
    ['an agent presses Stop', () => stop(c, c.tok.a2, ch.id, m.id), 403, 'FORBIDDEN'],
    ['the wrong channel', () => append(c, c.tok.a1, secret.id, m.id, { append: 'x' }), 404, 'NOT_FOUND'],
    ['an unknown message', () => append(c, c.tok.a1, ch.id, '00000000-0000-7000-8000-000000000000', { append: 'x' }), 404, 'NOT_FOUND'],
    ['empty append', () => append(c, c.tok.a1, ch.id, m.id, { append: '' }), 400, 'VALIDATION_ERROR'],
    ['both forms', () => append(c, c.tok.a1, ch.id, m.id, { append: 'a', appends: ['b'] }), 400, 'VALIDATION_ERROR'],
    ['an unknown field', () => append(c, c.tok.a1, ch.id, m.id, { append: 'a', seq: 3 }), 400, 'VALIDATION_ERROR'],
    ['one append too large', () => append(c, c.tok.a1, ch.id, m.id, { append: 'é'.repeat(MAX_APPEND_BYTES / 2 + 1) }), 413, 'STREAM_TOO_LONG'],
    ['the text would be too long', () => append(c, c.tok.a1, ch.id, m.id, { appends: ['x'.repeat(30), 'y'.repeat(6)] }), 413, 'STREAM_TOO_LONG'],
    ['a final text too long', () => finish(c, c.tok.a1, ch.id, m.id, { text: 'z'.repeat(41) }), 400, 'VALIDATION_ERROR'],
  ]
  for (const [what, call, status, code] of cases) {
    const r = await call()
    t.equal(r.statusCode, status, what)
    t.same(Object.keys(r.json()).sort(), ['code', 'error'], what)
    t.equal(r.json().code, code, what)
  }
  t.same(await getMessage(c, c.tok.member, ch.id, m.id), before, 'the message is as it was')
  t.same(c.events, [], 'no event')
  // Still open: the author goes on up to the limit exactly.
  const ok = await append(c, c.tok.a1, ch.id, m.id, { append: 'x'.repeat(35) })
  t.equal(ok.statusCode, 200)
  t.same(ok.json(), { message_id: m.id, seq: 1, length: 40 })
})

t.test('limits: append requests per second per stream (429 with Retry-After), streams per agent (409)', async (t) => {
  const c = await setup(t)
  const ch = await channel(c, 'limits')
  const m = await started(c, c.tok.a1, ch.id)
  const answers = await Promise.all(Array.from({ length: 60 }, () => append(c, c.tok.a1, ch.id, m.id, { append: 'a' })))
  const limited = answers.filter((r) => r.statusCode === 429)
  t.ok(limited.length >= 10, `${limited.length} of 60 in one second refused`)
  t.equal(limited[0]!.json().code, 'RATE_LIMITED')
  t.match(limited[0]!.headers['retry-after'], /^[1-9]\d*$/)
  const admitted = answers.filter((r) => r.statusCode === 200).length
  t.equal((await getMessage(c, c.tok.member, ch.id, m.id)).text, 'a'.repeat(admitted), 'exactly the admitted appends were written')

  for (let i = 1; i < MAX_CONCURRENT_STREAMS; i++) await started(c, c.tok.a1, ch.id)
  const over = await start(c, c.tok.a1, ch.id)
  t.equal(over.statusCode, 409)
  t.equal(over.json().code, 'TOO_MANY_STREAMS')
  t.equal((await start(c, c.tok.a2, ch.id)).statusCode, 201, 'per agent')
  await cancel(c, c.tok.a1, ch.id, m.id)
  t.equal((await start(c, c.tok.a1, ch.id)).statusCode, 201, 'one ended: room for another')
})

t.test('a stream in a thread counts as a reply of its root', async (t) => {
  const c = await setup(t)
  const ch = await channel(c, 'thread')
  const root = await post(c.api, c.tok.member, ch.id, 'question?')
  const m = await started(c, c.tok.a1, ch.id, { text: 'thinking', thread_id: root.id })
  t.equal(m.thread_id, root.id)
  const r = await getMessage(c, c.tok.member, ch.id, root.id)
  t.equal(r.reply_count, 1)
  t.same(r.recent_replier_ids, [c.ws.agents[0]!.id])
  const replies = (await c.api({ method: 'GET', url: url(ch.id, root.id, '/replies'), headers: bearer(c.tok.member) })).json()
  t.same(
    replies.messages.map((x: Json) => [x.id, x.stream_state]),
    [[m.id, 'streaming']],
  )
  const nested = await start(c, c.tok.a1, ch.id, { text: '', thread_id: m.id })
  t.equal(nested.statusCode, 400)
  t.equal(nested.json().code, 'THREAD_NOT_ROOT')
  await finish(c, c.tok.a1, ch.id, m.id)
  c.events.length = 0
})

t.test('Stop: any human who can read; logged once; unanswered for 30 s the sweep interrupts it', async (t) => {
  const c = await setup(t)
  const ch = await channel(c, 'stop')
  const m = await started(c, c.tok.a1, ch.id, { text: 'long answer' })
  c.events.length = 0
  const res = await stop(c, c.tok.observer, ch.id, m.id)
  t.equal(res.statusCode, 200, 'observers read, so they may stop')
  t.match(res.json(), { id: m.id, stream_state: 'streaming' })
  t.equal((await stop(c, c.tok.member, ch.id, m.id)).statusCode, 200, 'again: fine, nothing new')
  t.same(
    c.events.map((e) => [e.type, e.payload]),
    [['message.stop_requested', { message_id: m.id, channel_id: ch.id, thread_id: null, author_id: c.ws.agents[0]!.id, requested_by_id: c.ws.observer.id, requested_by_name: 'observer' }]],
  )
  const outsider = await createChannel(c.api, c.tok.a2, 'elsewhere')
  t.equal((await stop(c, c.tok.member, outsider.id, m.id)).statusCode, 404)
  c.events.length = 1

  // Appends keep the stream from going idle, but not from the Stop's deadline.
  t.equal(await sweepStreams(c.app.ctx, Date.now() + 29_000), 0, 'within 30 s: still streaming')
  await append(c, c.tok.a1, ch.id, m.id, { append: '…' })
  t.equal(await sweepStreams(c.app.ctx, Date.now() + 31_000), 1)
  const ended = await getMessage(c, c.tok.member, ch.id, m.id)
  t.match(ended, { stream_state: 'interrupted', text: 'long answer…' })
  t.same(
    c.events.slice(1).map((e) => e.type),
    ['message.stream_finished', 'message.created'],
  )
  t.equal((await append(c, c.tok.a1, ch.id, m.id, { append: 'late' })).json().code, 'STREAM_ENDED')
})

t.test('idle streams become interrupted (STREAM_IDLE_SECONDS), those of a dead instance too; two sweeps end each once', async (t) => {
  const c = await setup(t, { STREAM_IDLE_SECONDS: '60' })
  const ch = await channel(c, 'idle')
  const quiet = await started(c, c.tok.a1, ch.id, { text: 'quiet' })
  const busy = await started(c, c.tok.a2, ch.id, { text: 'busy' })
  t.equal(await sweepStreams(c.app.ctx, Date.now() + 59_000), 0)

  // A second instance on the same database; the first one goes away with its streams open.
  const other = await build(t, { databaseUrl: c.config.databaseUrl, env: { STREAM_IDLE_SECONDS: '60' } })
  const later = Date.now() + 61_000
  await c.app.db.pool.query('UPDATE message_streams SET last_append_at = $2 WHERE message_id = $1', [busy.id, new Date(later - 1_000)])
  await c.app.close()
  const [a, b] = await Promise.all([sweepStreams(other.app.ctx, later), sweepStreams(other.app.ctx, later)])
  t.equal(a + b, 1, 'the idle one ended once')
  const read = async (id: string) => (await other.api({ method: 'GET', url: url(ch.id, id), headers: bearer(c.tok.member) })).json()
  t.match(await read(quiet.id), { stream_state: 'interrupted', text: 'quiet' })
  t.match(await read(busy.id), { stream_state: 'streaming' })
  const { rows } = await other.app.db.pool.query<{ type: string }>("SELECT type FROM outbox_events WHERE payload->'message'->>'id' = $1 ORDER BY id", [quiet.id])
  t.same(
    rows.map((r) => r.type),
    ['message.stream_started', 'message.stream_finished', 'message.created'],
    'logged once each',
  )
})

t.test('status on a stream: set by its agent, read by a late joiner, cleared at the end', async (t) => {
  const c = await setup(t)
  const ch = await channel(c, 'status')
  const m = await started(c, c.tok.a1, ch.id, { text: 'Working' })
  const info = (token: string, id = m.id) => c.api({ method: 'GET', url: url(ch.id, id, '/stream'), headers: bearer(token) })
  t.same((await info(c.tok.member)).json(), { message_id: m.id, stream_state: 'streaming', seq: 0, status: null, stop_requested: false })
  const status = {
    title: 'Searching the docs…',
    steps: [
      { title: 'Read the question', state: 'complete' },
      { title: 'Search', state: 'in_progress' },
      { title: 'Answer', state: 'pending' },
    ],
  }
  const put = (token: string, body: Json) => c.api({ method: 'PUT', url: url(ch.id, m.id, '/stream/status'), headers: bearer(token), payload: body })
  const res = await put(c.tok.a1, status)
  t.equal(res.statusCode, 200)
  t.same(res.json(), { message_id: m.id, stream_state: 'streaming', seq: 0, status, stop_requested: false })
  await append(c, c.tok.a1, ch.id, m.id, { append: '…' })
  await stop(c, c.tok.member, ch.id, m.id)
  t.same((await info(c.tok.observer)).json(), { message_id: m.id, stream_state: 'streaming', seq: 1, status, stop_requested: true }, 'a late joiner reads status and Stop')

  for (const [what, r, code] of [
    ['another agent', await put(c.tok.a2, status), 403],
    ['a person', await put(c.tok.member, status), 403],
    ['a bad state', await put(c.tok.a1, { title: 'x', steps: [{ title: 'y', state: 'done' }] }), 400],
    ['no title', await put(c.tok.a1, { steps: [] }), 400],
  ] as const) {
    t.equal(r.statusCode, code, what)
  }
  t.same((await info(c.tok.member)).json().status, status, 'unchanged')
  await finish(c, c.tok.a1, ch.id, m.id)
  t.same((await info(c.tok.member)).json(), { message_id: m.id, stream_state: 'complete', seq: 0, status: null, stop_requested: false }, 'cleared at the end')
  t.equal((await put(c.tok.a1, status)).json().code, 'STREAM_ENDED')
  const outsider = await createChannel(c.api, c.tok.a2, 'outside')
  t.equal((await c.api({ method: 'GET', url: url(outsider.id, m.id, '/stream'), headers: bearer(c.tok.a2) })).statusCode, 404)
})

t.test('search indexes the final text only: a streaming message is not found, it is once finished, cancelled or interrupted', async (t) => {
  const c = await setup(t)
  const ch = await channel(c, 'findable')
  const search = async (q: string): Promise<string[]> => {
    const res = await c.api({ method: 'GET', url: `/api/v1/messages/search?q=${encodeURIComponent(q)}`, headers: bearer(c.tok.member) })
    if (res.statusCode !== 200) throw new Error(`search: ${res.statusCode} ${res.body}`)
    return res.json().results.map((m: Json) => m.id)
  }
  const finished = await started(c, c.tok.a1, ch.id, { text: 'zebrafish' })
  const cancelled = await started(c, c.tok.a1, ch.id, { text: 'quokka' })
  const interrupted = await started(c, c.tok.a2, ch.id, { text: 'axolotl' })
  for (const [m, word] of [
    [finished, ' pangolin'],
    [cancelled, ' narwhal'],
    [interrupted, ' okapi'],
  ] as const) {
    t.equal((await append(c, c.tok[m === interrupted ? 'a2' : 'a1'], ch.id, m.id, { append: word })).statusCode, 200)
  }
  for (const word of ['zebrafish', 'pangolin', 'quokka', 'narwhal', 'axolotl', 'okapi']) t.same(await search(word), [], `"${word}" is not found while it streams`)
  const { rows } = await c.app.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM messages WHERE channel_id = $1 AND search IS NOT NULL', [ch.id])
  t.equal(rows[0]!.n, 0, 'no search vector is stored while streaming')

  await finish(c, c.tok.a1, ch.id, finished.id, { text: 'zebrafish and a capybara' })
  await cancel(c, c.tok.a1, ch.id, cancelled.id)
  t.same(await search('capybara'), [finished.id], 'the final text of a finished stream')
  t.same(await search('pangolin'), [], 'not what the final text replaced')
  t.same(await search('narwhal'), [cancelled.id], 'a cancelled stream: what was written')
  t.same(await search('okapi'), [], 'still streaming')
  t.equal(await sweepStreams(c.app.ctx, Date.now() + 10 * 60_000), 1)
  t.same(await search('axolotl okapi'), [interrupted.id], 'an interrupted stream: what was written')
})

t.test('finish with a file (multipart, as a post takes it): the message carries the attachment in message.created; refusals leave no file and the stream open', async (t) => {
  const c = await setup(t)
  const ch = await channel(c, 'report')
  const content = Buffer.from('col1,col2\n1,2\n'.repeat(100))
  const finishForm = (token: string, m: string, parts: Parameters<typeof multipart>[0]) => {
    const form = multipart(parts)
    return c.api({ method: 'POST', url: url(ch.id, m, '/stream/finish'), headers: { ...bearer(token), ...form.headers }, payload: form.payload })
  }
  const m = await started(c, c.tok.a1, ch.id, { text: 'Here is the report' })
  c.events.length = 0

  // Refusals: another agent, a second file, too large. The stream stays open, no file is left.
  t.equal((await finishForm(c.tok.a2, m.id, [{ name: 'file', file: content, filename: 'r.csv' }])).statusCode, 403, 'not the author')
  const two = await finishForm(c.tok.a1, m.id, [
    { name: 'file', file: content, filename: 'a.csv' },
    { name: 'file', file: content, filename: 'b.csv' },
  ])
  t.ok(two.statusCode === 400 || two.statusCode === 413, 'a second file is refused')
  const big = await finishForm(c.tok.a1, m.id, [{ name: 'file', file: Buffer.alloc(10 * 1024 * 1024 + 1, 7), filename: 'big.bin' }])
  t.equal(big.statusCode, 413)
  t.equal(big.json().code, 'PAYLOAD_TOO_LARGE')
  t.same(await readdir(c.config.uploadDir), [], 'no file left')
  t.equal((await getMessage(c, c.tok.member, ch.id, m.id)).stream_state, 'streaming', 'still streaming')
  t.same(c.events, [], 'nothing emitted')

  const res = await finishForm(c.tok.a1, m.id, [
    { name: 'text', value: 'Here is the report: 100 rows.' },
    { name: 'file', file: content, filename: 'report.csv', type: 'text/csv' },
  ])
  t.equal(res.statusCode, 200, res.body)
  const done = res.json()
  t.match(done, { id: m.id, stream_state: 'complete', text: 'Here is the report: 100 rows.' })
  t.match(done.attachment, { file_name: 'report.csv', content_type: 'text/csv', size: content.length })
  t.same(await getMessage(c, c.tok.member, ch.id, m.id), done, 'history shows it')
  t.same(
    c.events.map((e) => [e.type, e.payload]),
    [
      ['message.stream_finished', { message: done }],
      ['message.created', { message: done }],
    ],
    'message.created carries the attachment, once',
  )
  const dl = await c.api({ method: 'GET', url: `/api/v1/attachments/${done.attachment.id}`, headers: bearer(c.tok.member) })
  t.equal(dl.statusCode, 200)
  t.same(dl.rawPayload, content)

  // A stream with no text may finish with a file alone, as a post may.
  const bare = await started(c, c.tok.a1, ch.id)
  const fileOnly = await finishForm(c.tok.a1, bare.id, [{ name: 'file', file: content, filename: 'only.csv', type: 'text/csv' }])
  t.equal(fileOnly.statusCode, 200, fileOnly.body)
  t.match(fileOnly.json(), { text: '', stream_state: 'complete', attachment: { file_name: 'only.csv' } })
  t.equal((await finishForm(c.tok.a1, bare.id, [{ name: 'file', file: content }])).json().code, 'STREAM_ENDED')
  t.equal((await readdir(c.config.uploadDir)).length, 2, 'the refused finish left no file')
})

t.test('more streams end at once than the pool has connections: every end succeeds (no query on the pool inside the transaction)', async (t) => {
  // Each end is one transaction holding a pooled connection. It used to read the channel's
  // members and the conversation on the pool from inside: with every connection held by an end,
  // each waited for one more until Prisma gave up (500, then 503). Four connections, eight ends.
  const c = await setup(t, { DATABASE_POOL_SIZE: '4' })
  const agents = [c.tok.a1, c.tok.a2]
  const streams: { token: string; ch: string; id: string }[] = []
  for (let i = 0; i < 8; i++) {
    const token = agents[i % 2]!
    const ch = await createChannel(c.api, token, `ends-${i}`)
    const m = await started(c, token, ch.id, { text: `part ${i} for @member` })
    streams.push({ token, ch: ch.id, id: m.id })
  }
  const ends = await Promise.all(streams.map((s) => finish(c, s.token, s.ch, s.id)))
  t.same(
    ends.map((r) => r.statusCode),
    streams.map(() => 200),
    ends.map((r) => r.body.slice(0, 120)).join(' | '),
  )
  t.same(
    ends.map((r) => r.json().stream_state),
    streams.map(() => 'complete'),
  )
})
