// Bugs reported in issue 24, on the server's side, each with the test that failed before its fix:
// an upload's size limit stated exactly, search snippets that keep emoji, and a WebSocket for an
// account awaiting approval that a browser can tell apart from a lost connection.
import t from 'tap'
import { uuidv7 } from '../../src/lib/ids.ts'
import { multipart, setup } from '../conversations/fixtures/support.ts'
import { connect, listen, openWs, wsUrl } from '../realtime/helpers.ts'
import { bearer, build, createChannel, post, seedWorkspace } from '../support/index.ts'

t.test('an 11,000,000-byte file: 413 states the limit in exact bytes, not "10 MB" for both', async (t) => {
  const c = await setup(t)
  const ch = await createChannel(c.api, c.tok.a1, 'uploads')
  const body = multipart([
    { name: 'text', value: 'big' },
    { name: 'file', file: Buffer.alloc(11_000_000, 1), filename: 'big.bin' },
  ])
  const res = await c.api({ method: 'POST', url: `/api/v1/channels/${ch.id}/messages`, headers: { ...bearer(c.tok.a1), ...body.headers }, payload: body.payload })
  t.equal(res.statusCode, 413)
  t.same(res.json(), { code: 'PAYLOAD_TOO_LARGE', error: 'the file is larger than 10,485,760 bytes (10 MiB), the most a message may carry' })
  const workspace = await c.api({ method: 'GET', url: '/api/v1/workspace', headers: bearer(c.tok.member) })
  t.equal(workspace.json().max_file_bytes, 10_485_760, 'clients read the exact limit instead of assuming it')
})

t.test('search snippets keep emoji (and the last word) of short messages', async (t) => {
  const c = await setup(t)
  const ch = await createChannel(c.api, c.tok.a1, 'party')
  await post(c.api, c.tok.a1, ch.id, '🎉 deploy done 🚀')
  await post(c.api, c.tok.a1, ch.id, 'ship it 🚀 today ✅ done 👍🏽 ok')
  const search = async (q: string) => {
    const res = await c.api({ method: 'GET', url: `/api/v1/messages/search?q=${encodeURIComponent(q)}`, headers: bearer(c.tok.a1) })
    t.equal(res.statusCode, 200, res.body)
    return res.json().results.map((r: { snippet: string }) => r.snippet)
  }
  t.same(await search('deploy'), ['🎉 <mark>deploy</mark> done 🚀'])
  t.same(await search('ship'), ['<mark>ship</mark> it 🚀 today ✅ done 👍🏽 ok'])
  // A long message is still cut into fragments around the match, emoji inside kept.
  const words = Array.from({ length: 60 }, (_, i) => `word${i}`)
  words.splice(30, 0, '🚀', 'launch', '🚀')
  await post(c.api, c.tok.a1, ch.id, words.join(' '))
  const [long] = await search('launch')
  t.match(long, /🚀 <mark>launch<\/mark> 🚀/)
  t.ok(long.split(' ').length < words.length, 'an excerpt, not the whole text')
  // Markup in a message stays text: only our <mark> tags are tags.
  await post(c.api, c.tok.a1, ch.id, '<b>bold</b> & deploy 🚀')
  t.ok((await search('bold')).includes('&lt;b&gt;<mark>bold</mark>&lt;/b&gt; &amp; deploy 🚀'))
})

t.test('an account awaiting approval: the socket opens and closes at once with 4403, which a browser can read', async (t) => {
  const { app } = await build(t)
  await seedWorkspace(app)
  await listen(app)
  const pending = await app.db.prisma.user.create({ data: { id: uuidv7(), email: 'pending@example.com', displayName: 'Pending', role: 'member', awaitingApproval: true } })
  const socket = await openWs(wsUrl(app, { token: app.signUserToken(pending.id) }))
  const closed = await socket.closed
  t.equal(closed.code, 4403, 'not 1006 (a refused upgrade looks like a lost connection to a browser)')
  t.equal(closed.reason, "APPROVAL_PENDING: this account awaits the workspace owner's approval")
  t.same(socket.frames, [], 'no frame, no ready: nothing of the workspace')

  // Approved, the same token connects normally.
  await app.db.prisma.user.update({ where: { id: pending.id }, data: { awaitingApproval: false } })
  const { client, ready } = await connect(app, app.signUserToken(pending.id))
  t.match(ready, { type: 'ready', principal: { id: pending.id, type: 'HUMAN' } })
  await client.close()
})

t.test('sign-up page data: GET /auth/registration needs no credential and says the mode', async (t) => {
  const { app, api } = await build(t)
  const before = await api({ method: 'GET', url: '/api/v1/auth/registration' })
  t.same([before.statusCode, before.json()], [200, { bootstrapped: false, registration_mode: 'closed' }])
  const ws = await seedWorkspace(app)
  t.same((await api({ method: 'GET', url: '/api/v1/auth/registration' })).json(), { bootstrapped: true, registration_mode: 'approval' })
  await api({ method: 'PATCH', url: '/api/v1/workspace', headers: bearer(ws.owner.token), payload: { registration_mode: 'open' } })
  t.same((await api({ method: 'GET', url: '/api/v1/auth/registration' })).json(), { bootstrapped: true, registration_mode: 'open' })
})
