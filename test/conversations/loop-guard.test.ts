// Loop protection (docs/loops.md), the window guard: the workspace settings and their validation,
// agent-only runs refused with 429 LOOP_DETECTED and Retry-After, reset by a human message, the
// window passing, exactness under concurrency and across two servers, multipart posts.
import t from 'tap'
import { build } from '../helper.ts'
import { multipart, setup } from './fixtures/support.ts'
import { assertLoopDetected, count, postAs, room, settings, WORKSPACE } from './fixtures/loops.ts'
import { bearer, createChannel, post } from '../support/index.ts'

t.test('the settings: safe defaults, owner-only changes, bad values are 400 and change nothing', async (t) => {
  const c = await setup(t)
  const initial = await c.api({ method: 'GET', url: WORKSPACE, headers: bearer(c.tok.a1) })
  t.equal(initial.statusCode, 200)
  t.match(initial.json(), { loop_guard_max_messages: 20, loop_guard_window_seconds: 60, loop_guard_max_depth: 20 })

  const ok = await c.api({ method: 'PATCH', url: WORKSPACE, headers: bearer(c.tok.owner), payload: { loop_guard_max_messages: 5, loop_guard_window_seconds: 30 } })
  t.equal(ok.statusCode, 200)
  t.match(ok.json(), { loop_guard_max_messages: 5, loop_guard_window_seconds: 30, loop_guard_max_depth: 20 })
  const other = await c.api({ method: 'PATCH', url: WORKSPACE, headers: bearer(c.tok.owner), payload: { registration_mode: 'open' } })
  t.match(other.json(), { loop_guard_max_messages: 5, loop_guard_window_seconds: 30, loop_guard_max_depth: 20 }, 'a PATCH of another setting leaves them alone')
  const before = other.json()

  const bad: Record<string, unknown>[] = [
    { loop_guard_max_messages: -1 },
    { loop_guard_max_messages: 1_001 },
    { loop_guard_max_messages: 2.5 },
    { loop_guard_max_messages: '5' },
    { loop_guard_max_messages: null },
    { loop_guard_window_seconds: 0 },
    { loop_guard_window_seconds: 86_401 },
    { loop_guard_max_depth: -3 },
    { loop_guard_max_depth: true },
    // One valid field does not carry an invalid one through.
    { loop_guard_max_messages: 7, loop_guard_window_seconds: 0 },
    { loop_guard_max_depth: 4, loop_guard_extra: 1 },
  ]
  for (const payload of bad) {
    const res = await c.api({ method: 'PATCH', url: WORKSPACE, headers: bearer(c.tok.owner), payload })
    t.equal(res.statusCode, 400, JSON.stringify(payload))
    t.same(Object.keys(res.json()).sort(), ['code', 'error'])
    t.equal(res.json().code, 'VALIDATION_ERROR')
  }
  const after = await c.api({ method: 'GET', url: WORKSPACE, headers: bearer(c.tok.owner) })
  t.same(after.json(), before, 'nothing changed')

  for (const token of [c.tok.a1, c.tok.member]) {
    const res = await c.api({ method: 'PATCH', url: WORKSPACE, headers: bearer(token), payload: { loop_guard_max_messages: 0 } })
    t.equal(res.statusCode, 403, 'only the owner changes them')
  }
  t.equal((await c.api({ method: 'PATCH', url: WORKSPACE, payload: { loop_guard_max_messages: 0 } })).statusCode, 401)
  t.match((await c.api({ method: 'GET', url: WORKSPACE, headers: bearer(c.tok.owner) })).json(), { loop_guard_max_messages: 5 })
})

t.test('agents alone get N messages in a conversation, then 429 LOOP_DETECTED until a human speaks there', async (t) => {
  const c = await setup(t)
  await settings(c, { loop_guard_max_messages: 3, loop_guard_window_seconds: 600, loop_guard_max_depth: 0 })
  const channel = await room(c)
  const elsewhere = await room(c, 'elsewhere')

  for (const [i, token] of [c.tok.a1, c.tok.a2, c.tok.a1].entries()) {
    t.equal((await postAs(c.api, token, channel, { text: `agent ${i}` })).statusCode, 201, `agent message ${i + 1}`)
  }
  const refused = await postAs(c.api, c.tok.a2, channel, { text: 'one too many' })
  assertLoopDetected(t, refused, 600)
  t.match(refused.json().error, /agents posted 3 messages here within 600 s/)
  assertLoopDetected(t, await postAs(c.api, c.tok.a1, channel, { text: 'again' }), 600)
  t.equal(await count(c, channel), 3, 'nothing stored for the refused posts')
  t.notOk(
    c.events.some((e) => e.type === 'message.created' && (e.payload.message as { text: string }).text === 'one too many'),
    'no event either',
  )

  // Another conversation has its own count; a stranger learns nothing (404, not 429).
  t.equal((await postAs(c.api, c.tok.a1, elsewhere, { text: 'fine here' })).statusCode, 201)
  const outsider = await createChannel(c.api, c.tok.primary, 'private-to-primary')
  await settings(c, { loop_guard_max_messages: 1 })
  t.equal((await postAs(c.api, c.tok.primary, outsider.id, { text: 'one' })).statusCode, 201)
  const stranger = await postAs(c.api, c.tok.a1, outsider.id, { text: 'let me in' })
  t.equal(stranger.statusCode, 404, 'a non-member gets the answer of any non-member, not the guard')
  await settings(c, { loop_guard_max_messages: 3 })

  // A human message resets the count: three more agent messages, then refused again.
  t.equal((await postAs(c.api, c.tok.member, channel, { text: 'a human says stop' })).statusCode, 201)
  for (let i = 0; i < 3; i++) t.equal((await postAs(c.api, i % 2 ? c.tok.a2 : c.tok.a1, channel, { text: `after human ${i}` })).statusCode, 201)
  assertLoopDetected(t, await postAs(c.api, c.tok.a2, channel, { text: 'over' }), 600)
  t.equal(await count(c, channel, 'AGENT'), 6)
  t.equal(await count(c, channel, 'HUMAN'), 1)

  // Humans are never counted or refused; the guard turned off lets agents through.
  for (let i = 0; i < 5; i++) t.equal((await postAs(c.api, c.tok.owner, elsewhere, { text: `owner ${i}` })).statusCode, 201)
  await settings(c, { loop_guard_max_messages: 0 })
  for (let i = 0; i < 10; i++) t.equal((await postAs(c.api, c.tok.a1, channel, { text: `unguarded ${i}` })).statusCode, 201)
})

t.test('the window passes: after Retry-After seconds an agent may post again', async (t) => {
  const c = await setup(t)
  await settings(c, { loop_guard_max_messages: 2, loop_guard_window_seconds: 1, loop_guard_max_depth: 0 })
  const channel = await room(c)
  t.equal((await postAs(c.api, c.tok.a1, channel, { text: 'one' })).statusCode, 201)
  t.equal((await postAs(c.api, c.tok.a2, channel, { text: 'two' })).statusCode, 201)
  let refused = await postAs(c.api, c.tok.a1, channel, { text: 'three' })
  // On a slow machine the first message may already have left the 1 s window.
  if (refused.statusCode === 201) refused = await postAs(c.api, c.tok.a1, channel, { text: 'four' })
  assertLoopDetected(t, refused, 1)
  await new Promise((resolve) => setTimeout(resolve, Number(refused.headers['retry-after']) * 1000))
  t.equal((await postAs(c.api, c.tok.a1, channel, { text: 'after the window' })).statusCode, 201)
})

t.test('concurrent agent posts, on two servers of one workspace, store exactly N', async (t) => {
  const c = await setup(t)
  const second = await build(t, { databaseUrl: c.config.databaseUrl })
  await settings(c, { loop_guard_max_messages: 7, loop_guard_window_seconds: 600, loop_guard_max_depth: 0 })
  const channel = await room(c)
  const tokens = [c.tok.a1, c.tok.a2]
  const results = await Promise.all(Array.from({ length: 40 }, (_, i) => postAs(i % 2 ? second.api : c.api, tokens[i % 2]!, channel, { text: `burst ${i}` })))
  const statuses = results.map((r) => r.statusCode)
  t.equal(statuses.filter((s) => s === 201).length, 7, 'exactly N admitted')
  t.equal(statuses.filter((s) => s === 429).length, 33, 'every other post refused')
  for (const r of results) if (r.statusCode === 429) t.equal(r.json().code, 'LOOP_DETECTED')
  t.equal(await count(c, channel), 7, 'exactly N stored')

  // A human on the second server resets it for both.
  t.equal((await postAs(second.api, c.tok.member, channel, { text: 'human' })).statusCode, 201)
  t.equal((await postAs(c.api, c.tok.a1, channel, { text: 'again' })).statusCode, 201)
})

t.test('one batch of admissions spanning conversations counts each exactly, and a stranger in it is neither counted nor refused', async (t) => {
  const c = await setup(t)
  await settings(c, { loop_guard_max_messages: 5, loop_guard_window_seconds: 600, loop_guard_max_depth: 0 })
  const rooms = [await room(c, 'room-a'), await room(c, 'room-b'), await room(c, 'room-c')]
  // 60 concurrent agent posts, interleaved over three channels, plus the primary agent (a member
  // of none of them) posting into each: the admissions leave in shared batches.
  const posts = Array.from({ length: 60 }, (_, i) => ({ channel: rooms[i % 3]!, token: i % 2 ? c.tok.a2 : c.tok.a1 }))
  for (const channel of rooms) posts.splice(10, 0, { channel, token: c.tok.primary })
  const results = await Promise.all(posts.map((p, i) => postAs(c.api, p.token, p.channel, { text: `batch ${i}` })))
  for (const channel of rooms) {
    const mine = results.filter((_, i) => posts[i]!.channel === channel && posts[i]!.token !== c.tok.primary).map((r) => r.statusCode)
    t.equal(mine.filter((s) => s === 201).length, 5, 'exactly N admitted in each channel')
    t.equal(mine.filter((s) => s === 429).length, 15, 'the rest refused')
    t.equal(await count(c, channel), 5, 'exactly N stored in each channel')
  }
  const stranger = results.filter((_, i) => posts[i]!.token === c.tok.primary)
  for (const r of stranger) {
    t.not(r.statusCode, 201, 'the non-member cannot post')
    t.not(r.statusCode, 429, 'and is not told about the guard')
  }
  const top = await c.api({ method: 'PATCH', url: WORKSPACE, headers: bearer(c.tok.owner), payload: { loop_guard_max_messages: 1_000 } })
  t.equal(top.statusCode, 200, '1,000 is the largest setting')
})

t.test('a refused post with a file stores neither message nor file; multipart takes in_reply_to_event', async (t) => {
  const c = await setup(t)
  await settings(c, { loop_guard_max_messages: 1, loop_guard_window_seconds: 600, loop_guard_max_depth: 0 })
  const channel = await room(c)
  const first = await post(c.api, c.tok.a1, channel, 'first')
  const form = multipart([
    { name: 'text', value: 'with a file' },
    { name: 'in_reply_to_event', value: first.id },
    { name: 'file', file: Buffer.from('hello'), filename: 'a.txt', type: 'text/plain' },
  ])
  const refused = await c.api({ method: 'POST', url: `/api/v1/channels/${channel}/messages`, headers: { ...bearer(c.tok.a2), ...form.headers }, payload: form.payload })
  assertLoopDetected(t, refused, 600)
  t.equal(await c.app.db.prisma.attachment.count(), 0)
  const { readdir } = await import('node:fs/promises')
  t.same(
    (await readdir(c.config.uploadDir)).filter((f) => !f.startsWith('.')),
    [],
    'the upload was removed',
  )

  await post(c.api, c.tok.member, channel, 'human')
  const again = multipart([
    { name: 'text', value: 'with a file' },
    { name: 'in_reply_to_event', value: first.id },
    { name: 'file', file: Buffer.from('hello'), filename: 'a.txt', type: 'text/plain' },
  ])
  const ok = await c.api({ method: 'POST', url: `/api/v1/channels/${channel}/messages`, headers: { ...bearer(c.tok.a2), ...again.headers }, payload: again.payload })
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
