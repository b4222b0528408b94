// Streaming messages and webhooks (issue 25), with real receivers: a webhook subscribed to
// message.created gets the streamed message once, when it finishes, never the text in between;
// one subscribed to message.stream_started gets the start; message.stop_requested goes to the
// streaming agent's webhook only.
import t from 'tap'
import { setup } from '../conversations/fixtures/support.ts'
import { addMember, bearer, createChannel } from '../support/index.ts'
import { createWebhook, FAST_ENV, receiver } from './helpers.ts'

const url = (ch: string, m?: string, tail = '') => `/api/v1/channels/${ch}/messages${m ? `/${m}` : ''}${tail}`

t.test('webhooks: message.created once at the end; stream_started on request; Stop to the streaming agent only', async (t) => {
  const c = await setup(t, FAST_ENV)
  const [author, peer] = c.ws.agents as [(typeof c.ws.agents)[0], (typeof c.ws.agents)[0]]
  const peerRx = await receiver(t)
  await createWebhook(c.api, peer.key, peer.id, peerRx.url('/peer'), ['message.created', 'message.stop_requested'])
  const startRx = await receiver(t)
  await createWebhook(c.api, peer.key, peer.id, startRx.url('/starts'), ['message.stream_started'])
  const authorRx = await receiver(t)
  await createWebhook(c.api, author.key, author.id, authorRx.url('/author'), ['message.stop_requested'])
  const ch = await createChannel(c.api, author.key, 'hooked')
  await addMember(c.api, author.key, ch.id, peer.id)
  await addMember(c.api, author.key, ch.id, c.ws.member.id)

  const m = (await c.api({ method: 'POST', url: url(ch.id), headers: bearer(author.key), payload: { stream: true, text: 'Part one' } })).json()
  for (const append of [', part two', ', part three']) {
    const res = await c.api({ method: 'POST', url: url(ch.id, m.id, '/stream'), headers: bearer(author.key), payload: { append } })
    t.equal(res.statusCode, 200)
  }
  const stop = await c.api({ method: 'POST', url: url(ch.id, m.id, '/stream/stop'), headers: bearer(c.tok.member) })
  t.equal(stop.statusCode, 200)
  const [stopHook] = await authorRx.waitFor(1)
  const stopBody = JSON.parse(stopHook!.body)
  t.equal(stopBody.event_type, 'message.stop_requested')
  t.same(stopBody.payload, { message_id: m.id, channel_id: ch.id, thread_id: null, author_id: author.id, requested_by_id: c.ws.member.id, requested_by_name: 'member' })

  const done = (await c.api({ method: 'POST', url: url(ch.id, m.id, '/stream/finish'), headers: bearer(author.key), payload: {} })).json()
  t.equal(done.text, 'Part one, part two, part three')
  const [created] = await peerRx.waitFor(1)
  const body = JSON.parse(created!.body)
  t.equal(body.event_type, 'message.created')
  t.equal(body.event_id, m.id)
  t.same(body.payload, { message: done }, 'the final message, complete')
  const [started] = await startRx.waitFor(1)
  t.same(JSON.parse(started!.body).payload.message, { ...m, text: 'Part one' })

  // Wait for anything late: a plain post afterwards is delivered after the stream's events.
  const after = await c.api({ method: 'POST', url: url(ch.id), headers: bearer(author.key), payload: { text: 'afterwards' } })
  await peerRx.waitFor(2)
  t.same(
    peerRx.requests.map((r) => JSON.parse(r.body)).map((b) => [b.event_type, b.payload.message?.id ?? b.payload.message_id]),
    [
      ['message.created', m.id],
      ['message.created', after.json().id],
    ],
    'the peer got the streamed message once and no Stop (not its stream)',
  )
  t.equal(authorRx.requests.length, 1)
})
