import t from 'tap'
import { setup } from './fixtures/support.ts'
import { addMember, bearer, createChannel, disableLoopGuard, post } from '../support/index.ts'

t.test("search: ranked hits with highlighted snippets, only in the caller's channels, channel filter, limits", async (t) => {
  const c = await setup(t)
  await disableLoopGuard(c.app) // 25+ agent messages in a row below: not what this tests
  const ops = await createChannel(c.api, c.tok.a1, 'ops')
  const dev = await createChannel(c.api, c.tok.a1, 'dev')
  const hidden = await createChannel(c.api, c.tok.a2, 'hidden')
  await addMember(c.api, c.tok.a1, dev.id, c.ws.member.id)
  const deploy1 = await post(c.api, c.tok.a1, ops.id, 'Deploying the new release tonight')
  const deploy2 = await post(c.api, c.tok.a1, dev.id, 'deploy deploy deploy: the release pipeline deploys <script>alert(1)</script>')
  await post(c.api, c.tok.a1, dev.id, 'lunch at noon?')
  const secret = await post(c.api, c.tok.a2, hidden.id, 'secret deploy plan')
  const q = (query: string, token = c.tok.a1) => c.api({ method: 'GET', url: `/api/v1/messages/search?${query}`, headers: bearer(token) })

  const res = await q('q=deploy')
  t.equal(res.statusCode, 200)
  const hits = res.json().results
  t.same(
    hits.map((h: any) => h.message.id),
    [deploy2.id, deploy1.id],
    'stemmed (deploying/deploys), best rank first, never the hidden channel',
  )
  t.same(hits[0].message, deploy2)
  const { message, rank, snippet, ...flat } = hits[0]
  t.same(flat, deploy2, 'the message fields are also at the top level of a hit')
  t.ok(message && rank && snippet)
  t.ok(hits[0].rank > hits[1].rank)
  t.match(hits[0].snippet, /<mark>deploy<\/mark>/)
  t.notMatch(hits[0].snippet, /<script>/, 'the snippet is HTML-escaped')
  t.match(hits[0].snippet, /&lt;script&gt;/)
  t.match(hits[1].snippet, /<mark>Deploying<\/mark>/)

  t.same(
    (await q(`q=deploy&channel_id=${ops.id}`)).json().results.map((h: any) => h.message.id),
    [deploy1.id],
  )
  t.same(
    (await q('q=deploy', c.tok.member)).json().results.map((h: any) => h.message.id),
    [deploy2.id],
    'a member of dev only',
  )
  t.same(
    (await q('q="release tonight"')).json().results.map((h: any) => h.message.id),
    [deploy1.id],
    'phrases',
  )
  t.same(
    (await q('q=deploy -pipeline')).json().results.map((h: any) => h.message.id),
    [deploy1.id],
    'exclusion',
  )
  t.same((await q('q=the')).json().results, [], 'stop words alone match nothing')
  t.equal((await q('q=deploy&limit=1')).json().results.length, 1)
  const dm = await c.api({ method: 'POST', url: '/api/v1/dm', headers: bearer(c.tok.a1), payload: { participant_id: c.ws.member.id } })
  t.equal(dm.statusCode, 201)
  const inDm = await post(c.api, c.tok.a1, dm.json().id, 'deploy talk in private')
  const ids = async (token: string) => ((await q('q=deploy', token)).json().results.map((h: any) => h.message.id) as string[]).sort()
  t.same(await ids(c.tok.member), [deploy2.id, inDm.id].sort(), 'a participant finds its DM')
  t.same(await ids(c.tok.owner), [deploy1.id, deploy2.id, secret.id].sort(), 'the owner searches every regular channel it may read, never the DMs of others')

  const malformed = await q('q=x&channel_id=nope')
  t.same([malformed.statusCode, malformed.json().code], [404, 'NOT_FOUND'], 'a channel_id that is not a UUID is an unknown channel')
  for (const query of ['', 'q=', 'q=%20%20', 'q=x&limit=101', 'q=x&limit=0', 'q=x&other=1']) {
    const r = await q(query)
    t.equal(r.statusCode, 400, query)
    t.equal(r.json().code, 'VALIDATION_ERROR')
  }
  const foreign = await q(`q=deploy&channel_id=${hidden.id}`)
  t.equal(foreign.statusCode, 404, 'filtering on a channel one cannot read is 404')
  t.equal((await c.api({ method: 'GET', url: '/api/v1/messages/search?q=deploy' })).statusCode, 401)

  // Default limit 20.
  for (let i = 0; i < 25; i++) await post(c.api, c.tok.a1, ops.id, `incident number ${i}`)
  t.equal((await q('q=incident')).json().results.length, 20)
  t.equal((await q('q=incident&limit=100')).json().results.length, 25)
})
