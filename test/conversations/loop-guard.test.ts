// Loop protection (docs/loops.md), the turn limit: the workspace settings and their validation
// (the renamed setting answers a clear 400), agents answering each other refused with 429
// LOOP_DETECTED and Retry-After at the configured number of turns, reset by a human message, the
// window passing, multipart posts; and what is never refused: one agent posting any number in a
// row (back to back, concurrently), agents that listen to nothing interleaving at random.
import t from 'tap'
import { readdir } from 'node:fs/promises'
import { multipart, setup } from './fixtures/support.ts'
import { assertLoopDetected, count, LISTEN_ENV, listens, postAs, room, settings, takeTurns, WORKSPACE } from './fixtures/loops.ts'
import { bearer, createChannel, post } from '../support/index.ts'

t.test('the settings: safe defaults, owner-only changes, bad values and the old name are 400 and change nothing', async (t) => {
  const c = await setup(t)
  const initial = await c.api({ method: 'GET', url: WORKSPACE, headers: bearer(c.tok.a1) })
  t.equal(initial.statusCode, 200)
  t.match(initial.json(), { loop_guard_enabled: true, loop_guard_max_turns: 20, loop_guard_window_seconds: 60, loop_guard_max_depth: 20 })
  t.notOk('loop_guard_max_messages' in initial.json(), 'the old setting is gone')

  const ok = await c.api({ method: 'PATCH', url: WORKSPACE, headers: bearer(c.tok.owner), payload: { loop_guard_max_turns: 5, loop_guard_window_seconds: 30 } })
  t.equal(ok.statusCode, 200)
  t.match(ok.json(), { loop_guard_enabled: true, loop_guard_max_turns: 5, loop_guard_window_seconds: 30, loop_guard_max_depth: 20 })
  const other = await c.api({ method: 'PATCH', url: WORKSPACE, headers: bearer(c.tok.owner), payload: { registration_mode: 'open' } })
  t.match(other.json(), { loop_guard_max_turns: 5, loop_guard_window_seconds: 30, loop_guard_max_depth: 20 }, 'a PATCH of another setting leaves them alone')
  const before = other.json()

  const renamed = await c.api({ method: 'PATCH', url: WORKSPACE, headers: bearer(c.tok.owner), payload: { loop_guard_max_messages: 0 } })
  t.equal(renamed.statusCode, 400)
  t.same(Object.keys(renamed.json()).sort(), ['code', 'error'])
  t.equal(renamed.json().code, 'VALIDATION_ERROR')
  t.match(renamed.json().error, /'loop_guard_max_messages' was replaced by 'loop_guard_max_turns'.*'loop_guard_enabled'/, 'an old client is told what replaced it')

  const bad: Record<string, unknown>[] = [
    { loop_guard_max_turns: 0 },
    { loop_guard_max_turns: 1_001 },
    { loop_guard_max_turns: 2.5 },
    { loop_guard_max_turns: '5' },
    { loop_guard_max_turns: null },
    { loop_guard_enabled: 'no' },
    { loop_guard_enabled: 0 },
    { loop_guard_window_seconds: 0 },
    { loop_guard_window_seconds: 86_401 },
    { loop_guard_max_depth: -3 },
    { loop_guard_max_depth: true },
    // One valid field does not carry an invalid one (or the old name) through.
    { loop_guard_max_turns: 7, loop_guard_window_seconds: 0 },
    { loop_guard_max_turns: 7, loop_guard_max_messages: 7 },
    { loop_guard_max_depth: 4, loop_guard_extra: 1 },
  ]
  for (const payload of bad) {
    const res = await c.api({ method: 'PATCH', url: WORKSPACE, headers: bearer(c.tok.owner), payload })
    t.equal(res.statusCode, 400, JSON.stringify(payload))
    t.same(Object.keys(res.json()).sort(), ['code', 'error'])
    t.equal(res.json().code, 'VALIDATION_ERROR')
  }
  t.same((await c.api({ method: 'GET', url: WORKSPACE, headers: bearer(c.tok.owner) })).json(), before, 'nothing changed')

  for (const token of [c.tok.a1, c.tok.member]) {
    const res = await c.api({ method: 'PATCH', url: WORKSPACE, headers: bearer(token), payload: { loop_guard_enabled: false } })
    t.equal(res.statusCode, 403, 'only the owner changes them')
  }
  t.equal((await c.api({ method: 'PATCH', url: WORKSPACE, payload: { loop_guard_enabled: false } })).statusCode, 401)
  const off = await c.api({ method: 'PATCH', url: WORKSPACE, headers: bearer(c.tok.owner), payload: { loop_guard_enabled: false, loop_guard_max_turns: 1_000 } })
  t.match(off.json(), { loop_guard_enabled: false, loop_guard_max_turns: 1_000 }, '1,000 turns is the largest setting')
})

t.test('two listening agents answering each other get N turns, then 429 LOOP_DETECTED until a human speaks there', async (t) => {
  const c = await setup(t, LISTEN_ENV)
  await settings(c, { loop_guard_max_turns: 3, loop_guard_window_seconds: 600, loop_guard_max_depth: 0 })
  await listens(t, c, 0)
  await listens(t, c, 1)
  const channel = await room(c)
  const elsewhere = await room(c, 'elsewhere')

  // a1 opens (no turn), then a2, a1, a2 are three turns; the fourth is refused.
  t.same(await takeTurns(c.api, channel, [c.tok.a1, c.tok.a2, c.tok.a1, c.tok.a2]), [201, 201, 201, 201])
  const refused = await postAs(c.api, c.tok.a1, channel, { text: 'one turn too many' })
  assertLoopDetected(t, refused, 600)
  t.match(refused.json().error, /agents took 3 turns answering each other here within 600 s/)
  t.equal(await count(c, channel), 4, 'nothing stored for the refused post')
  t.notOk(
    c.events.some((e) => e.type === 'message.created' && (e.payload.message as { text: string }).text === 'one turn too many'),
    'no event either',
  )
  // The agent who spoke last goes on: more messages in a row are no turn.
  t.same(await takeTurns(c.api, channel, [c.tok.a2, c.tok.a2, c.tok.a2]), [201, 201, 201], 'the last speaker may keep posting')
  assertLoopDetected(t, await postAs(c.api, c.tok.a1, channel, { text: 'still answering' }), 600)

  // Another conversation has its own count; a stranger learns nothing (404, not 429).
  t.same(await takeTurns(c.api, elsewhere, [c.tok.a1, c.tok.a2]), [201, 201])
  const outsider = await createChannel(c.api, c.tok.primary, 'private-to-primary')
  t.equal((await postAs(c.api, c.tok.primary, outsider.id, { text: 'one' })).statusCode, 201)
  t.equal((await postAs(c.api, c.tok.a1, outsider.id, { text: 'let me in' })).statusCode, 404, 'a non-member gets the answer of any non-member, not the guard')

  // A human message starts over: three more turns, then refused again.
  t.equal((await postAs(c.api, c.tok.member, channel, { text: 'a human says stop' })).statusCode, 201)
  t.same(await takeTurns(c.api, channel, [c.tok.a1, c.tok.a2, c.tok.a1, c.tok.a2]), [201, 201, 201, 201])
  assertLoopDetected(t, await postAs(c.api, c.tok.a1, channel, { text: 'over' }), 600)

  // Turned off, nothing is refused.
  await settings(c, { loop_guard_enabled: false })
  t.same(await takeTurns(c.api, channel, [c.tok.a1, c.tok.a2, c.tok.a1, c.tok.a2, c.tok.a1]), [201, 201, 201, 201, 201])
})

t.test('agents that listen to nothing take no turns: interleaved at random, never refused', async (t) => {
  const c = await setup(t)
  await settings(c, { loop_guard_max_turns: 1, loop_guard_window_seconds: 86_400, loop_guard_max_depth: 20 })
  const channel = await room(c)
  await addThird(c, channel)
  // The rule is time-independent for agents that hear nothing (no webhook, integration or socket):
  // three agents posting 10 messages/s each for 30 s is 900 posts in random order; posted here
  // as fast as the server takes them, ten at a time.
  const tokens = [c.tok.a1, c.tok.a2, c.tok.primary]
  const order = Array.from({ length: 900 }, (_, i) => tokens[i % 3]!)
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1))
    ;[order[i], order[j]] = [order[j]!, order[i]!]
  }
  const statuses: number[] = []
  for (let i = 0; i < order.length; i += 10) {
    const slice = await Promise.all(order.slice(i, i + 10).map((token, k) => postAs(c.api, token, channel, { text: `independent ${i + k}` })))
    statuses.push(...slice.map((r) => r.statusCode))
  }
  t.same([...new Set(statuses)], [201], 'all 900 accepted')
  t.equal(await count(c, channel), 900)
})

async function addThird(c: Awaited<ReturnType<typeof setup>>, channel: string): Promise<void> {
  const res = await c.api({ method: 'POST', url: `/api/v1/channels/${channel}/members`, headers: bearer(c.tok.a1), payload: { user_id: c.ws.primary.id } })
  if (res.statusCode !== 201) throw new Error(`add member: ${res.statusCode} ${res.body}`)
}

t.test('one agent posting 300 messages back to back, and 40 at once, is never refused', async (t) => {
  const c = await setup(t, LISTEN_ENV)
  // The strictest turn limit, and the agent listens: posting on its own is no turn.
  await settings(c, { loop_guard_max_turns: 1, loop_guard_window_seconds: 86_400, loop_guard_max_depth: 20 })
  await listens(t, c, 0)
  const channel = await room(c)
  await post(c.api, c.tok.a2, channel, 'another agent spoke first')
  const statuses: number[] = []
  for (let i = 0; i < 300; i++) statuses.push((await postAs(c.api, c.tok.a1, channel, { text: `report line ${i}` })).statusCode)
  t.same([...new Set(statuses)], [201], 'all 300 accepted')

  const bulk = await room(c, 'bulk')
  await post(c.api, c.tok.a2, bulk, 'a few messages already here')
  const results = await Promise.all(Array.from({ length: 40 }, (_, i) => postAs(c.api, c.tok.a1, bulk, { text: `import ${i}` })))
  t.same([...new Set(results.map((r) => r.statusCode))], [201], 'all 40 concurrent posts accepted')
  t.equal(await count(c, bulk, 'AGENT'), 41, 'and stored')
})

t.test('the window passes: after Retry-After seconds the agent may answer again', async (t) => {
  const c = await setup(t, LISTEN_ENV)
  await settings(c, { loop_guard_max_turns: 1, loop_guard_window_seconds: 1, loop_guard_max_depth: 0 })
  await listens(t, c, 0)
  await listens(t, c, 1)
  const channel = await room(c)
  let refused: Awaited<ReturnType<typeof postAs>> | null = null
  // On a slow machine a turn may already have left the 1 s window: alternate until refused.
  for (let i = 0; i < 20 && !refused; i++) {
    const res = await postAs(c.api, i % 2 ? c.tok.a2 : c.tok.a1, channel, { text: `turn ${i}` })
    if (res.statusCode === 429) refused = res
  }
  if (!refused) throw new Error('not refused within 20 posts')
  assertLoopDetected(t, refused, 1)
  const wait = Number(refused.headers['retry-after']) * 1000 + 100
  await new Promise((resolve) => setTimeout(resolve, wait))
  const last = await c.app.db.prisma.message.findFirst({ where: { channelId: channel }, orderBy: { id: 'desc' } })
  const next = last!.authorId === c.ws.agents[0]!.id ? c.tok.a2 : c.tok.a1
  t.equal((await postAs(c.api, next, channel, { text: 'after the window' })).statusCode, 201)
})

t.test('a refused post with a file stores neither message nor file; multipart takes in_reply_to_event', async (t) => {
  const c = await setup(t, LISTEN_ENV)
  await settings(c, { loop_guard_max_turns: 1, loop_guard_window_seconds: 600, loop_guard_max_depth: 0 })
  await listens(t, c, 0)
  await listens(t, c, 1)
  const channel = await room(c)
  const first = await post(c.api, c.tok.a1, channel, 'first')
  await post(c.api, c.tok.a2, channel, 'second: a turn')
  const form = () =>
    multipart([
      { name: 'text', value: 'with a file' },
      { name: 'in_reply_to_event', value: first.id },
      { name: 'file', file: Buffer.from('hello'), filename: 'a.txt', type: 'text/plain' },
    ])
  const once = form()
  const refused = await c.api({ method: 'POST', url: `/api/v1/channels/${channel}/messages`, headers: { ...bearer(c.tok.a1), ...once.headers }, payload: once.payload })
  assertLoopDetected(t, refused, 600)
  t.equal(await c.app.db.prisma.attachment.count(), 0)
  t.same(
    (await readdir(c.config.uploadDir)).filter((f) => !f.startsWith('.')),
    [],
    'the upload was removed',
  )

  await post(c.api, c.tok.member, channel, 'human')
  const again = form()
  const ok = await c.api({ method: 'POST', url: `/api/v1/channels/${channel}/messages`, headers: { ...bearer(c.tok.a1), ...again.headers }, payload: again.payload })
  t.equal(ok.statusCode, 201)
  t.equal(ok.json().in_reply_to_event, first.id)
  t.equal(ok.json().chain_depth, 2)

  const bad = multipart([
    { name: 'text', value: 'x' },
    { name: 'in_reply_to_event', value: 'not-a-uuid' },
  ])
  const res = await c.api({ method: 'POST', url: `/api/v1/channels/${channel}/messages`, headers: { ...bearer(c.tok.member), ...bad.headers }, payload: bad.payload })
  t.equal(res.statusCode, 400)
  t.equal(res.json().code, 'VALIDATION_ERROR')
})

t.test('a thread loop is stopped in its thread and leaves the channel free', async (t) => {
  const c = await setup(t, LISTEN_ENV)
  await settings(c, { loop_guard_max_turns: 2, loop_guard_window_seconds: 600, loop_guard_max_depth: 0 })
  await listens(t, c, 0)
  await listens(t, c, 1)
  const channel = await room(c)
  const root = await post(c.api, c.tok.member, channel, 'a human asks')
  t.same(await takeTurns(c.api, channel, [c.tok.a1, c.tok.a2, c.tok.a1], { thread_id: root.id }), [201, 201, 201], 'two turns in the thread')
  const refused = await postAs(c.api, c.tok.a2, channel, { text: 'third turn', thread_id: root.id })
  assertLoopDetected(t, refused, 600)
  t.equal((await c.api({ method: 'GET', url: `/api/v1/channels/${channel}/messages/${root.id}`, headers: bearer(c.tok.member) })).json().reply_count, 3, 'the refused reply is not counted on its root')
  t.same(await takeTurns(c.api, channel, [c.tok.a2, c.tok.a1, c.tok.a2]), [201, 201, 201], 'the channel has its own turns')
  assertLoopDetected(t, await postAs(c.api, c.tok.a1, channel, { text: 'channel third turn' }), 600)
  assertLoopDetected(t, await postAs(c.api, c.tok.a2, channel, { text: 'still', thread_id: root.id }), 600)
  // A human in the thread starts the thread over, not the channel.
  t.equal((await postAs(c.api, c.tok.member, channel, { text: 'a human in the thread', thread_id: root.id })).statusCode, 201)
  t.same(await takeTurns(c.api, channel, [c.tok.a2, c.tok.a1], { thread_id: root.id }), [201, 201])
  assertLoopDetected(t, await postAs(c.api, c.tok.a1, channel, { text: 'channel still blocked' }), 600)
})

t.test('streams take turns as posts do: an echo pair of streaming agents is stopped at the start of one stream too many, in a channel and in a thread', async (t) => {
  const c = await setup(t, LISTEN_ENV)
  await settings(c, { loop_guard_max_turns: 3, loop_guard_window_seconds: 600, loop_guard_max_depth: 0 })
  await listens(t, c, 0)
  await listens(t, c, 1)
  const channel = await room(c)
  /** An agent streams a whole answer (start, one append, finish): the start's status, or the refusal. */
  const streamAs = async (token: string, extra: Record<string, unknown> = {}) => {
    const res = await postAs(c.api, token, channel, { stream: true, text: 'thinking', ...extra })
    if (res.statusCode !== 201) return res
    const id = res.json().id
    const base = `/api/v1/channels/${channel}/messages/${id}/stream`
    await c.api({ method: 'POST', url: base, headers: bearer(token), payload: { append: ' done' } })
    await c.api({ method: 'POST', url: `${base}/finish`, headers: bearer(token), payload: {} })
    return res
  }

  // a1 opens (no turn), then a2, a1, a2 stream three turns; a1's fourth start is refused.
  for (const token of [c.tok.a1, c.tok.a2, c.tok.a1, c.tok.a2]) t.equal((await streamAs(token)).statusCode, 201)
  c.events.length = 0
  const refused = await streamAs(c.tok.a1)
  assertLoopDetected(t, refused, 600)
  t.equal(await count(c, channel), 4, 'nothing stored for the refused start')
  t.same(c.events, [], 'no event either')
  t.equal(await c.app.db.pool.query('SELECT 1 FROM message_streams').then((r) => r.rowCount), 0, 'no stream left open')
  // Streams and posts count together: a post is refused just the same, and the last speaker goes on.
  assertLoopDetected(t, await postAs(c.api, c.tok.a1, channel, { text: 'a post instead' }), 600)
  t.equal((await streamAs(c.tok.a2)).statusCode, 201, 'the last speaker may keep streaming')

  // In a thread: its own count, streams and posts alike.
  const root = (await postAs(c.api, c.tok.member, channel, { text: 'a question' })).json()
  const statuses = []
  for (const token of [c.tok.a1, c.tok.a2, c.tok.a1, c.tok.a2]) statuses.push((await streamAs(token, { thread_id: root.id })).statusCode)
  t.same(statuses, [201, 201, 201, 201])
  assertLoopDetected(t, await streamAs(c.tok.a1, { thread_id: root.id }), 600)

  // A human message starts over.
  t.equal((await postAs(c.api, c.tok.member, channel, { text: 'stop it, both of you' })).statusCode, 201)
  t.equal((await streamAs(c.tok.a1)).statusCode, 201)
})
