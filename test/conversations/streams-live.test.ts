// Where a streaming message's text lives (docs/decisions.md, "Streaming messages: the text in
// memory, the row once a second"): an append grows the live text only; readers see it at once;
// the row takes it with the flush (within a second), at shutdown and at the end. An instance
// that does not know a stream loads it from the row; with Redis, two instances share the live
// text, so appends through either are ordered and nothing is lost. A member who leaves the
// channel appends no more, and keeps what it wrote.
import t, { type Test } from 'tap'
import { addMember, bearer, build, createChannel, removeMember, seedWorkspace, type TestApp, type Workspace } from '../support/index.ts'
import { flushTexts } from '../../src/modules/streams/live.ts'
import { sweepStreams } from '../../src/modules/streams/service.ts'
import { STREAM_FLUSH_MS } from '../../src/modules/streams/schemas.ts'

type Json = Record<string, any>

const url = (ch: string, m?: string, tail = '') => `/api/v1/channels/${ch}/messages${m ? `/${m}` : ''}${tail}`

async function world(t: Test, options: { redis?: boolean } = {}) {
  const first = await build(t, { redis: options.redis })
  const ws = await seedWorkspace(first.app)
  const ch = await createChannel(first.api, ws.agents[0]!.key, 'live-text')
  for (const id of [ws.agents[1]!.id, ws.member.id]) await addMember(first.api, ws.agents[0]!.key, ch.id, id)
  return { first, ws, ch }
}

const start = async (c: TestApp, key: string, ch: string, text = ''): Promise<Json> => {
  const res = await c.api({ method: 'POST', url: url(ch), headers: bearer(key), payload: { stream: true, text } })
  if (res.statusCode !== 201) throw new Error(`start: ${res.statusCode} ${res.body}`)
  return res.json()
}
const append = (c: TestApp, key: string, ch: string, m: string, text: string) => c.api({ method: 'POST', url: url(ch, m, '/stream'), headers: bearer(key), payload: { append: text } })
const read = async (c: TestApp, ws: Workspace, ch: string, m: string): Promise<Json> => (await c.api({ method: 'GET', url: url(ch, m), headers: bearer(ws.member.token) })).json()
const row = async (c: TestApp, m: string) =>
  (await c.app.db.pool.query<{ text: string; seq: number | null }>('SELECT m.text, s.seq FROM messages m LEFT JOIN message_streams s ON s.message_id = m.id WHERE m.id = $1', [m])).rows[0]!

t.test('an append grows the live text: readers see it at once, the row within a flush', async (t) => {
  const { first: c, ws, ch } = await world(t)
  const key = ws.agents[0]!.key
  const m = await start(c, key, ch.id, 'Hello')
  t.same((await append(c, key, ch.id, m.id, ', world')).json(), { message_id: m.id, seq: 1, length: 12 })
  t.equal((await read(c, ws, ch.id, m.id)).text, 'Hello, world', 'a reader sees the live text')
  const list = (await c.api({ method: 'GET', url: url(ch.id), headers: bearer(ws.member.token) })).json()
  t.equal(list.messages[0].text, 'Hello, world', 'history too')

  // The row follows by itself, within about a second.
  const deadline = Date.now() + STREAM_FLUSH_MS * 5
  while ((await row(c, m.id)).text !== 'Hello, world' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
  t.same(await row(c, m.id), { text: 'Hello, world', seq: 1 }, 'the flush wrote the text and the count')

  // Many appends, one flush: the row takes the last state.
  for (const part of ['!', ' How', ' are', ' you?']) await append(c, key, ch.id, m.id, part)
  await flushTexts(c.app.ctx)
  t.same(await row(c, m.id), { text: 'Hello, world! How are you?', seq: 5 })
})

t.test('shutdown writes what the row lacks; another instance then goes on from the row', async (t) => {
  const { first, ws, ch } = await world(t)
  const key = ws.agents[0]!.key
  const m = await start(first, key, ch.id)
  await append(first, key, ch.id, m.id, 'written before ')
  await first.app.close()
  t.same(await row(await build(t, { databaseUrl: first.config.databaseUrl }), m.id), { text: 'written before ', seq: 1 }, 'closing flushed it')

  const second = await build(t, { databaseUrl: first.config.databaseUrl })
  t.same((await append(second, key, ch.id, m.id, 'the restart')).json(), { message_id: m.id, seq: 2, length: 'written before the restart'.length }, 'loaded from the row: the count goes on')
  const done = await second.api({ method: 'POST', url: url(ch.id, m.id, '/stream/finish'), headers: bearer(key), payload: {} })
  t.equal(done.json().text, 'written before the restart')
  t.same(await row(second, m.id), { text: 'written before the restart', seq: null }, 'ended: the row holds the final text, the stream row is gone')
})

t.test('the sweep ends an idle stream with its live text, even before a flush', async (t) => {
  const { first: c, ws, ch } = await world(t)
  const key = ws.agents[0]!.key
  const m = await start(c, key, ch.id, 'a')
  await append(c, key, ch.id, m.id, 'b')
  t.equal(await sweepStreams(c.app.ctx, Date.now() + 10 * 60_000), 1)
  t.match(await read(c, ws, ch.id, m.id), { stream_state: 'interrupted', text: 'ab' })
  t.equal((await append(c, key, ch.id, m.id, 'c')).json().code, 'STREAM_ENDED')
})

t.test('a member who leaves appends no more; what it wrote stays, and its stream ends as any other', async (t) => {
  const { first: c, ws, ch } = await world(t)
  const key = ws.agents[1]!.key
  const m = await start(c, key, ch.id, 'started')
  await append(c, key, ch.id, m.id, ' and went on')
  await removeMember(c.api, ws.agents[0]!.key, ch.id, ws.agents[1]!.id)
  const after = await append(c, key, ch.id, m.id, ' after leaving')
  t.equal(after.statusCode, 404, 'an agent does not see a channel it is not in')
  t.same(Object.keys(after.json()).sort(), ['code', 'error'])
  t.equal((await read(c, ws, ch.id, m.id)).text, 'started and went on', 'nothing appended after it left')
  t.same(await row(c, m.id), { text: 'started and went on', seq: 1 }, 'written when it left')
  // Back in the channel, it goes on where it was.
  await addMember(c.api, ws.agents[0]!.key, ch.id, ws.agents[1]!.id)
  t.same((await append(c, key, ch.id, m.id, ' back')).json(), { message_id: m.id, seq: 2, length: 'started and went on back'.length })
})

t.test('with Redis, two instances share the live text: appends through both are ordered, and either ends it', async (t) => {
  const { first, ws, ch } = await world(t, { redis: true })
  const second = await build(t, { redis: true, databaseUrl: first.config.databaseUrl, redisPrefix: first.config.redisPrefix })
  const key = ws.agents[0]!.key
  const m = await start(first, key, ch.id, '0')
  const seqs: number[] = []
  for (let i = 1; i <= 10; i++) seqs.push((await append(i % 2 ? second : first, key, ch.id, m.id, String(i))).json().seq)
  t.same(seqs, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 'one count across instances')
  t.equal((await read(second, ws, ch.id, m.id)).text, '012345678910', 'the live text, read through either')
  t.equal((await read(first, ws, ch.id, m.id)).text, '012345678910')

  // Both flush: the row takes the newest state once, whatever the order.
  await flushTexts(second.app.ctx)
  await flushTexts(first.app.ctx)
  t.same(await row(first, m.id), { text: '012345678910', seq: 10 })

  const refused = await append(second, ws.agents[1]!.key, ch.id, m.id, 'x')
  t.equal(refused.statusCode, 403, 'not the author, through the other instance too')
  const done = await first.api({ method: 'POST', url: url(ch.id, m.id, '/stream/finish'), headers: bearer(key), payload: {} })
  t.equal(done.json().text, '012345678910')
  t.equal((await append(second, key, ch.id, m.id, 'late')).json().code, 'STREAM_ENDED', 'ended for every instance')
  const keys = await first.app.redis!.keys(`${first.config.redisPrefix}stream:*`)
  t.same(keys, [], 'the live text is dropped from Redis at the end')
})
