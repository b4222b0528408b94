// Threads: a reply names a root message of its channel (one level). REST (fields, the root's
// summary, pagination, access, refusals, deletion, the roots filter), multipart, the WebSocket
// send_message frame, a real webhook receiver, the integration inbound endpoint and the loop
// guard counting a thread on its own.
import t from 'tap'
import { multipart, setup } from './fixtures/support.ts'
import { addMember, bearer, createChannel, disableLoopGuard, ISO_RE, MESSAGE_KEYS, MISSING, post, type Api } from '../support/index.ts'
import { connect, listen } from '../realtime/helpers.ts'
import { createWebhook, FAST_ENV, receiver } from '../webhooks/helpers.ts'

async function reply(api: Api, token: string, channelId: string, threadId: string, text: string): Promise<Record<string, any>> {
  const res = await api({ method: 'POST', url: `/api/v1/channels/${channelId}/messages`, headers: bearer(token), payload: { text, thread_id: threadId } })
  if (res.statusCode !== 201) throw new Error(`reply: ${res.statusCode} ${res.body}`)
  return res.json()
}

const get = (api: Api, token: string, url: string) => api({ method: 'GET', url, headers: bearer(token) })

t.test('a reply: 201 with thread_id; the root carries reply_count, last_reply_at, recent_replier_ids (3, distinct, newest first)', async (t) => {
  const c = await setup(t)
  await disableLoopGuard(c.app)
  const ch = await createChannel(c.api, c.tok.a1, 'threads')
  for (const id of [c.ws.agents[1]!.id, c.ws.primary.id, c.ws.member.id]) await addMember(c.api, c.tok.a1, ch.id, id)
  const root = await post(c.api, c.tok.a1, ch.id, 'the root')
  t.same(
    { thread_id: root.thread_id, reply_count: root.reply_count, last_reply_at: root.last_reply_at, recent_replier_ids: root.recent_replier_ids, deleted: root.deleted },
    { thread_id: null, reply_count: 0, last_reply_at: null, recent_replier_ids: [], deleted: false },
    'a new message is a root without replies',
  )

  c.events.length = 0
  const r1 = await reply(c.api, c.tok.a1, ch.id, root.id, 'first reply')
  t.same(Object.keys(r1).sort(), MESSAGE_KEYS)
  t.equal(r1.thread_id, root.id)
  t.equal(r1.reply_count, 0)
  t.equal(r1.last_reply_at, null)
  t.same(r1.recent_replier_ids, [])
  t.same(
    c.events.map((e) => [e.type, e.payload]),
    [['message.created', { message: r1 }]],
    'one event: the reply, carrying thread_id (no event for the root)',
  )

  const r2 = await reply(c.api, c.tok.a2, ch.id, root.id, 'second')
  const r3 = await reply(c.api, c.tok.primary, ch.id, root.id, 'third')
  const r4 = await reply(c.api, c.tok.a1, ch.id, root.id, 'fourth, a1 again')
  let got = (await get(c.api, c.tok.member, `/api/v1/channels/${ch.id}/messages/${root.id}`)).json()
  t.equal(got.reply_count, 4)
  t.match(got.last_reply_at, ISO_RE)
  t.equal(got.last_reply_at, r4.created_at)
  t.same(got.recent_replier_ids, [c.ws.agents[0]!.id, c.ws.primary.id, c.ws.agents[1]!.id], 'distinct, newest first, three at most')
  const r5 = await reply(c.api, c.tok.member, ch.id, root.id, 'a human')
  got = (await get(c.api, c.tok.member, `/api/v1/channels/${ch.id}/messages/${root.id}`)).json()
  t.same(got.recent_replier_ids, [c.ws.member.id, c.ws.agents[0]!.id, c.ws.primary.id])
  t.equal(got.reply_count, 5)

  // The channel's list: all (the default) has the replies, roots leaves them out; the page is one query.
  const all = (await get(c.api, c.tok.member, `/api/v1/channels/${ch.id}/messages`)).json()
  t.same(
    all.messages.map((m: { id: string }) => m.id),
    [r5.id, r4.id, r3.id, r2.id, r1.id, root.id],
  )
  t.same(all.messages[5], got, 'the root in the list carries its summary')
  const roots = (await get(c.api, c.tok.member, `/api/v1/channels/${ch.id}/messages?threads=roots`)).json()
  t.same(roots.messages, [got])
  t.same((await get(c.api, c.tok.member, `/api/v1/channels/${ch.id}/messages?threads=all`)).json(), all)
  const bad = await get(c.api, c.tok.member, `/api/v1/channels/${ch.id}/messages?threads=replies`)
  t.equal(bad.statusCode, 400)
  t.equal(bad.json().code, 'VALIDATION_ERROR')

  // The thread, with the channel list's cursors.
  const url = `/api/v1/channels/${ch.id}/messages/${root.id}/replies`
  const first = (await get(c.api, c.tok.member, `${url}?limit=2`)).json()
  t.same(first, { messages: [r5, r4], has_more: true, next_before: r4.id, next_after: r5.id })
  const second = (await get(c.api, c.tok.member, `${url}?limit=2&before=${r4.id}`)).json()
  t.same(
    second.messages.map((m: { id: string }) => m.id),
    [r3.id, r2.id],
  )
  t.equal(second.has_more, true)
  const third = (await get(c.api, c.tok.member, `${url}?limit=2&before=${r2.id}`)).json()
  t.same(third, { messages: [r1], has_more: false, next_before: r1.id, next_after: r1.id })
  const forward = (await get(c.api, c.tok.member, `${url}?limit=2&after=${r1.id}`)).json()
  t.same(
    forward.messages.map((m: { id: string }) => m.id),
    [r3.id, r2.id],
    'after: the oldest two newer ones, newest first',
  )
  t.equal(forward.has_more, true)
  const both = await get(c.api, c.tok.member, `${url}?before=${r4.id}&after=${r1.id}`)
  t.equal(both.statusCode, 400)
  t.equal(both.json().code, 'INVALID_CURSOR')
  const over = await get(c.api, c.tok.member, `${url}?limit=101`)
  t.equal(over.statusCode, 400)

  const lonely = await post(c.api, c.tok.a1, ch.id, 'no replies')
  t.same((await get(c.api, c.tok.member, `/api/v1/channels/${ch.id}/messages/${lonely.id}/replies`)).json(), { messages: [], has_more: false, next_before: null, next_after: null })
  const ofReply = await get(c.api, c.tok.member, `/api/v1/channels/${ch.id}/messages/${r1.id}/replies`)
  t.equal(ofReply.statusCode, 400)
  t.equal(ofReply.json().code, 'THREAD_NOT_ROOT')
  const unknown = await get(c.api, c.tok.member, `/api/v1/channels/${ch.id}/messages/${MISSING}/replies`)
  t.equal(unknown.statusCode, 404)
  t.equal(unknown.json().code, 'NOT_FOUND')
})

t.test('refusals: reply to a reply 400 THREAD_NOT_ROOT; another channel, unknown → 404; non-members see no thread; nothing stored', async (t) => {
  const c = await setup(t)
  const ch = await createChannel(c.api, c.tok.a1, 'private-thread')
  const other = await createChannel(c.api, c.tok.a1, 'other')
  await addMember(c.api, c.tok.a1, other.id, c.ws.agents[1]!.id)
  const root = await post(c.api, c.tok.a1, ch.id, 'root')
  const r1 = await reply(c.api, c.tok.a1, ch.id, root.id, 'reply')
  const elsewhere = await post(c.api, c.tok.a1, other.id, 'a root of another channel')
  const count = () => c.app.db.prisma.message.count()
  const before = await count()
  const postTo = (token: string, channelId: string, payload: Record<string, unknown>) => c.api({ method: 'POST', url: `/api/v1/channels/${channelId}/messages`, headers: bearer(token), payload })

  const nested = await postTo(c.tok.a1, ch.id, { text: 'nested', thread_id: r1.id })
  t.equal(nested.statusCode, 400)
  t.equal(nested.json().code, 'THREAD_NOT_ROOT')
  t.match(nested.json().error, root.id, 'the error names the root to reply to')
  for (const threadId of [elsewhere.id, MISSING]) {
    const res = await postTo(c.tok.a1, ch.id, { text: 'x', thread_id: threadId })
    t.equal(res.statusCode, 404, threadId)
    t.equal(res.json().code, 'NOT_FOUND')
  }
  const notUuid = await postTo(c.tok.a1, ch.id, { text: 'x', thread_id: 'abc' })
  t.equal(notUuid.statusCode, 400)
  t.equal(notUuid.json().code, 'VALIDATION_ERROR')

  // a2 is not a member of the private channel (but is of `other`): 404 whatever it names, even a real root.
  for (const threadId of [root.id, r1.id, MISSING]) {
    const res = await postTo(c.tok.a2, ch.id, { text: 'x', thread_id: threadId })
    t.equal(res.statusCode, 404)
    t.equal(res.json().code, 'NOT_FOUND')
  }
  const intruder = await get(c.api, c.tok.a2, `/api/v1/channels/${ch.id}/messages/${root.id}/replies`)
  t.equal(intruder.statusCode, 404, 'a non-member sees no thread')
  t.same(intruder.json(), (await get(c.api, c.tok.a2, `/api/v1/channels/${ch.id}/messages/${MISSING}/replies`)).json(), 'exactly like a missing one')
  const crossRead = await get(c.api, c.tok.a2, `/api/v1/channels/${other.id}/messages/${root.id}/replies`)
  t.equal(crossRead.statusCode, 404, 'a root of another channel is not a message of this one')
  // An observer of the channel may read the thread but not post in it.
  await addMember(c.api, c.tok.a1, ch.id, c.ws.observer.id)
  t.equal((await get(c.api, c.tok.observer, `/api/v1/channels/${ch.id}/messages/${root.id}/replies`)).statusCode, 200)
  const observer = await postTo(c.tok.observer, ch.id, { text: 'x', thread_id: root.id })
  t.equal(observer.statusCode, 403)
  t.equal(await count(), before, 'nothing stored')
  t.equal((await get(c.api, c.tok.a1, `/api/v1/channels/${ch.id}/messages/${root.id}`)).json().reply_count, 1, 'the root is untouched')
  t.equal((await c.api({ method: 'GET', url: `/api/v1/channels/${ch.id}/messages/${root.id}/replies` })).statusCode, 401)
})

t.test('multipart and Idempotency-Key: the reply with a file; a retry returns it and counts once', async (t) => {
  const c = await setup(t)
  const ch = await createChannel(c.api, c.tok.a1, 'files')
  const root = await post(c.api, c.tok.a1, ch.id, 'root')
  const form = multipart([
    { name: 'text', value: 'with a file' },
    { name: 'thread_id', value: root.id },
    { name: 'file', file: Buffer.from('hello'), filename: 'a.txt', type: 'text/plain' },
  ])
  const res = await c.api({ method: 'POST', url: `/api/v1/channels/${ch.id}/messages`, headers: { ...bearer(c.tok.a1), ...form.headers }, payload: form.payload })
  t.equal(res.statusCode, 201)
  t.equal(res.json().thread_id, root.id)
  t.equal(res.json().attachment.file_name, 'a.txt')
  const badForm = multipart([
    { name: 'text', value: 'x' },
    { name: 'thread_id', value: 'nope' },
  ])
  const bad = await c.api({ method: 'POST', url: `/api/v1/channels/${ch.id}/messages`, headers: { ...bearer(c.tok.a1), ...badForm.headers }, payload: badForm.payload })
  t.equal(bad.statusCode, 400)

  const headers = { ...bearer(c.tok.a1), 'idempotency-key': 'reply-1' }
  const once = await c.api({ method: 'POST', url: `/api/v1/channels/${ch.id}/messages`, headers, payload: { text: 'retry me', thread_id: root.id } })
  const again = await c.api({ method: 'POST', url: `/api/v1/channels/${ch.id}/messages`, headers, payload: { text: 'retry me', thread_id: root.id } })
  t.equal(once.statusCode, 201)
  t.same(again.json(), once.json())
  const elsewhere = await c.api({ method: 'POST', url: `/api/v1/channels/${ch.id}/messages`, headers, payload: { text: 'retry me' } })
  t.equal(elsewhere.statusCode, 409, 'the same key without the thread is another request')
  t.equal((await get(c.api, c.tok.a1, `/api/v1/channels/${ch.id}/messages/${root.id}`)).json().reply_count, 2)
})

t.test('deleting: a root with replies stays as a placeholder; a reply is recounted; the last reply of a placeholder takes it away', async (t) => {
  const c = await setup(t)
  await disableLoopGuard(c.app)
  const ch = await createChannel(c.api, c.tok.a1, 'deletions')
  await addMember(c.api, c.tok.a1, ch.id, c.ws.agents[1]!.id)
  const form = multipart([
    { name: 'text', value: 'root with a file' },
    { name: 'file', file: Buffer.from('data'), filename: 'r.txt' },
  ])
  const root = (await c.api({ method: 'POST', url: `/api/v1/channels/${ch.id}/messages`, headers: { ...bearer(c.tok.a1), ...form.headers }, payload: form.payload })).json()
  const r1 = await reply(c.api, c.tok.a1, ch.id, root.id, 'one')
  const r2 = await reply(c.api, c.tok.a2, ch.id, root.id, 'two')
  const del = (token: string, id: string) => c.api({ method: 'DELETE', url: `/api/v1/channels/${ch.id}/messages/${id}`, headers: bearer(token) })

  c.events.length = 0
  t.equal((await del(c.tok.a2, r2.id)).statusCode, 204)
  t.same(
    c.events.map((e) => [e.type, e.payload]),
    [['message.deleted', { message_id: r2.id, channel_id: ch.id, thread_id: root.id }]],
  )
  let got = (await get(c.api, c.tok.a1, `/api/v1/channels/${ch.id}/messages/${root.id}`)).json()
  t.equal(got.reply_count, 1)
  t.equal(got.last_reply_at, r1.created_at)
  t.same(got.recent_replier_ids, [c.ws.agents[0]!.id])

  c.events.length = 0
  t.equal((await del(c.tok.a1, root.id)).statusCode, 204)
  t.same(
    c.events.map((e) => [e.type, e.payload]),
    [['message.deleted', { message_id: root.id, channel_id: ch.id, thread_id: null }]],
  )
  got = (await get(c.api, c.tok.a2, `/api/v1/channels/${ch.id}/messages/${root.id}`)).json()
  const { attachment: _file, ...withoutFile } = root
  t.same(
    got,
    { ...withoutFile, text: '', deleted: true, reply_count: 1, last_reply_at: r1.created_at, recent_replier_ids: [c.ws.agents[0]!.id] },
    'a placeholder: empty text, no file, its summary kept',
  )
  t.notOk('attachment' in got)
  t.equal((await c.api({ method: 'GET', url: root.attachment.download_url.replace(/^https?:\/\/[^/]+/, ''), headers: bearer(c.tok.a1) })).statusCode, 404, 'the file is gone')
  t.same((await get(c.api, c.tok.a2, `/api/v1/channels/${ch.id}/messages?threads=roots`)).json().messages, [got], 'listed as a placeholder')
  t.same((await get(c.api, c.tok.a2, `/api/v1/channels/${ch.id}/messages/${root.id}/replies`)).json().messages, [r1], 'its replies stay readable')
  t.equal((await del(c.tok.a1, root.id)).statusCode, 404, 'a placeholder cannot be deleted again')
  const edit = await c.api({ method: 'PATCH', url: `/api/v1/channels/${ch.id}/messages/${root.id}`, headers: bearer(c.tok.a1), payload: { text: 'back' } })
  t.equal(edit.statusCode, 404, 'nor edited')
  t.equal((await reply(c.api, c.tok.a2, ch.id, root.id, 'still talking')).thread_id, root.id, 'the thread goes on')
  const last = (await get(c.api, c.tok.a2, `/api/v1/channels/${ch.id}/messages/${root.id}/replies`)).json().messages[0]

  c.events.length = 0
  t.equal((await del(c.tok.a1, r1.id)).statusCode, 204)
  t.equal((await del(c.tok.a2, last.id)).statusCode, 204)
  t.same(
    c.events.map((e) => [e.type, e.payload]),
    [
      ['message.deleted', { message_id: r1.id, channel_id: ch.id, thread_id: root.id }],
      ['message.deleted', { message_id: last.id, channel_id: ch.id, thread_id: root.id }],
      ['message.deleted', { message_id: root.id, channel_id: ch.id, thread_id: null }],
    ],
    'the placeholder goes with its last reply',
  )
  t.equal((await get(c.api, c.tok.a1, `/api/v1/channels/${ch.id}/messages/${root.id}`)).statusCode, 404)
  t.equal(await c.app.db.prisma.message.count({ where: { channelId: ch.id } }), 0)

  // A root without replies is deleted as before; a reply to it afterwards is 404.
  const plain = await post(c.api, c.tok.a1, ch.id, 'plain')
  t.equal((await del(c.tok.a1, plain.id)).statusCode, 204)
  t.equal(await c.app.db.prisma.message.count({ where: { channelId: ch.id } }), 0)
  const late = await c.api({ method: 'POST', url: `/api/v1/channels/${ch.id}/messages`, headers: bearer(c.tok.a1), payload: { text: 'late', thread_id: plain.id } })
  t.equal(late.statusCode, 404)
})

// The loop guard in threads: test/conversations/loop-turns.test.ts ('a thread loop is stopped in its thread').

t.test('WebSocket send_message with thread_id: the ack and the new_message frame carry it; refusals are error frames', async (t) => {
  const c = await setup(t)
  await listen(c.app)
  const ch = await createChannel(c.api, c.tok.a1, 'socket-threads')
  await addMember(c.api, c.tok.a1, ch.id, c.ws.agents[1]!.id)
  const root = await post(c.api, c.tok.a1, ch.id, 'root')
  const r1 = await reply(c.api, c.tok.a1, ch.id, root.id, 'a reply')
  const { client } = await connect(c.app, c.tok.a1)
  const peer = await connect(c.app, c.tok.a2)
  client.send({ type: 'send_message', id: 't-1', channel_id: ch.id, text: 'over the socket', thread_id: root.id })
  const ack = await client.type('ack')
  t.equal(ack.id, 't-1')
  t.equal(ack.message.thread_id, root.id)
  const frame = await peer.client.type('new_message', (f) => f.message.id === ack.message.id)
  t.same(frame.message, ack.message)
  client.send({ type: 'send_message', id: 't-2', channel_id: ch.id, text: 'nested', thread_id: r1.id })
  const nested = await client.type('error', (f) => f.id === 't-2')
  t.equal(nested.code, 'THREAD_NOT_ROOT')
  client.send({ type: 'send_message', id: 't-3', channel_id: ch.id, text: 'nowhere', thread_id: MISSING })
  t.equal((await client.type('error', (f) => f.id === 't-3')).code, 'NOT_FOUND')
  client.send({ type: 'send_message', id: 't-4', channel_id: ch.id, text: 'bad', thread_id: 'abc' })
  t.equal((await client.type('error', (f) => f.id === 't-4')).code, 'VALIDATION_ERROR')
  t.equal((await get(c.api, c.tok.a1, `/api/v1/channels/${ch.id}/messages/${root.id}`)).json().reply_count, 2)
  await client.close()
  await peer.client.close()
})

t.test('a real webhook receiver gets thread_id; the integration inbound endpoint posts replies and its deliveries carry thread_id', async (t) => {
  const c = await setup(t, FAST_ENV)
  const [agent, peer] = c.ws.agents as [(typeof c.ws.agents)[0], (typeof c.ws.agents)[0]]
  const hookRx = await receiver(t)
  await createWebhook(c.api, peer.key, peer.id, hookRx.url('/hook'), ['message.created', 'message.deleted'])
  const intRx = await receiver(t)
  const integration = (
    await c.api({
      method: 'POST',
      url: '/api/v1/integrations',
      headers: bearer(c.tok.owner),
      payload: { name: 'Platform', webhook_url: intRx.url('/events'), agent_ids: [agent.id] },
    })
  ).json()
  const ch = await createChannel(c.api, agent.key, 'hooked')
  await addMember(c.api, agent.key, ch.id, peer.id)
  const root = await post(c.api, peer.key, ch.id, 'root from the peer')

  const inbound = (payload: Record<string, unknown>) =>
    c.api({ method: 'POST', url: `/api/v1/integrations/${integration.id}/inbound`, headers: bearer(integration.api_key), payload: { channel_id: ch.id, agent_id: agent.id, ...payload } })
  const res = await inbound({ text: 'from the platform, in the thread', thread_id: root.id })
  t.equal(res.statusCode, 201)
  const r1 = res.json()
  t.equal(r1.thread_id, root.id)
  const nested = await inbound({ text: 'nested', thread_id: r1.id })
  t.equal(nested.statusCode, 400)
  t.equal(nested.json().code, 'THREAD_NOT_ROOT')
  const bad = await inbound({ text: 'x', thread_id: 'abc' })
  t.equal(bad.statusCode, 400)
  t.equal((await c.api({ method: 'DELETE', url: `/api/v1/channels/${ch.id}/messages/${r1.id}`, headers: bearer(agent.key) })).statusCode, 204)

  // The peer's webhook: its own root, then the reply and its deletion, each naming the thread.
  const hooks = await hookRx.waitFor(3)
  const bodies = hooks.map((r) => JSON.parse(r.body)).sort((a, b) => (a.event_id < b.event_id ? -1 : 1))
  t.same(
    bodies.map((b) => [b.event_type, b.payload]),
    [
      ['message.created', { message: root }],
      ['message.created', { message: r1 }],
      ['message.deleted', { message_id: r1.id, channel_id: ch.id, thread_id: root.id }],
    ],
    'message.created carries the message with thread_id; message.deleted names the thread',
  )

  // Both posts' message.created: the reply's deletion is delivered too, and may come before them.
  const created = await intRx.waitFor(2, (r) => r.headers['x-service-event'] === 'message.created')
  const payloads = created.map((r) => JSON.parse(r.body).payload)
  const rootPayload = payloads.find((p) => p.message_id === root.id)
  const replyPayload = payloads.find((p) => p.message_id === r1.id)
  t.same(rootPayload, { message_id: root.id, channel_id: ch.id, author_id: peer.id, author_type: 'agent', text: 'root from the peer', thread_id: null })
  t.same(replyPayload, { message_id: r1.id, channel_id: ch.id, author_id: agent.id, author_type: 'agent', text: 'from the platform, in the thread', thread_id: root.id })
})

t.test('concurrent replies and plain posts: every reply counted once, none in the batched roots', async (t) => {
  const c = await setup(t)
  await disableLoopGuard(c.app)
  const ch = await createChannel(c.api, c.tok.a1, 'busy')
  for (const id of [c.ws.agents[1]!.id, c.ws.primary.id, c.ws.member.id]) await addMember(c.api, c.tok.a1, ch.id, id)
  const root = await post(c.api, c.tok.a1, ch.id, 'root')
  const tokens = [c.tok.a1, c.tok.a2, c.tok.primary, c.tok.member]
  const replies = Array.from({ length: 24 }, (_, i) => reply(c.api, tokens[i % 4]!, ch.id, root.id, `reply ${i}`))
  const plain = Array.from({ length: 24 }, (_, i) => post(c.api, tokens[i % 4]!, ch.id, `plain ${i}`))
  const [stored] = await Promise.all([Promise.all(replies), Promise.all(plain)])
  const got = (await get(c.api, c.tok.a1, `/api/v1/channels/${ch.id}/messages/${root.id}`)).json()
  t.equal(got.reply_count, 24)
  t.equal(
    got.last_reply_at,
    stored
      .map((r) => r.created_at)
      .sort()
      .at(-1),
    'the latest reply time',
  )
  t.equal(got.recent_replier_ids.length, 3)
  t.equal(new Set(got.recent_replier_ids).size, 3, 'distinct')
  const authors = new Set([c.ws.agents[0]!.id, c.ws.agents[1]!.id, c.ws.primary.id, c.ws.member.id])
  t.ok(
    got.recent_replier_ids.every((id: string) => authors.has(id)),
    'repliers of this thread (concurrent replies are ordered as they committed)',
  )
  const thread = (await get(c.api, c.tok.a1, `/api/v1/channels/${ch.id}/messages/${root.id}/replies?limit=100`)).json()
  t.equal(thread.messages.length, 24)
  const roots = (await get(c.api, c.tok.a1, `/api/v1/channels/${ch.id}/messages?threads=roots&limit=100`)).json()
  t.equal(roots.messages.length, 25, 'the root and the plain posts')
  t.ok(roots.messages.every((m: { thread_id: string | null }) => m.thread_id === null))
})
