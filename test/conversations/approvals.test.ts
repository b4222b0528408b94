// Human approval in the conversation (issue 26, docs/approvals.md) over REST: an agent posts a
// message with `approval`; eligible people decide once (approve, deny, edit, respond); the first
// decision wins and a later one gets 409 with the outcome that stands; the agent may cancel; the
// request expires on a timer that survives a restart; refusals change nothing; a tampered request
// cannot be decided.
import { createHash } from 'node:crypto'
import t, { type Test } from 'tap'
import { approvalDigest, canonicalJson } from '../../src/modules/approvals/digest.ts'
import { setup, type Ctx } from './fixtures/support.ts'
import { addMember, bearer, build, createChannel, ISO_RE, MESSAGE_KEYS, seedWorkspace } from '../support/index.ts'

type Json = Record<string, any>

const ARGS = { service: 'api', version: '2.4.1', regions: ['eu', 'us'] }

async function world(t: Test) {
  const c = await setup(t)
  const ch = await createChannel(c.api, c.tok.a1, 'ops')
  await addMember(c.api, c.tok.a1, ch.id, c.ws.member.id)
  await addMember(c.api, c.tok.a1, ch.id, c.ws.observer.id)
  await addMember(c.api, c.tok.a1, ch.id, c.ws.agents[1]!.id)
  return { c, ch }
}

const ask = (c: Ctx, token: string, channelId: string, approval: Json, text = 'May I deploy api 2.4.1?') =>
  c.api({ method: 'POST', url: `/api/v1/channels/${channelId}/messages`, headers: bearer(token), payload: { text, approval } })

async function request(t: Test, c: Ctx, channelId: string, approval: Json = {}): Promise<Json> {
  const res = await ask(c, c.tok.a1, channelId, { action: 'deploy', arguments: ARGS, summary: 'Deploy api 2.4.1 to production', ...approval })
  t.equal(res.statusCode, 201, res.body)
  return res.json()
}

const url = (ch: string, m: string, tail = '') => `/api/v1/channels/${ch}/messages/${m}/approval${tail}`
const decide = (c: Ctx, token: string, ch: string, m: string, body: Json) => c.api({ method: 'POST', url: url(ch, m), headers: bearer(token), payload: body })
const read = async (c: Ctx, ch: string, m: string): Promise<Json> => (await c.api({ method: 'GET', url: url(ch, m), headers: bearer(c.tok.a1) })).json()
const approvalRows = async (c: Ctx) => c.app.db.prisma.approval.findMany({ orderBy: { messageId: 'asc' } })

t.test('an agent asks: the message carries the request, in every read path', async (t) => {
  const { c, ch } = await world(t)
  const m = await request(t, c, ch.id, { choices: ['approve', 'edit'] })
  t.same(Object.keys(m).sort(), [...MESSAGE_KEYS])
  const a1 = c.ws.agents[0]!
  t.same(m.approval, {
    message_id: m.id,
    channel_id: ch.id,
    requester_id: a1.id,
    action: 'deploy',
    arguments: ARGS,
    summary: 'Deploy api 2.4.1 to production',
    choices: ['approve', 'deny', 'edit'],
    approvers: 'members',
    expires_at: new Date(Date.parse(m.created_at) + 3600_000).toISOString(),
    on_expiry: 'deny',
    digest: createHash('sha256')
      .update(canonicalJson({ action: 'deploy', arguments: ARGS }))
      .digest('hex'),
    status: 'pending',
    decision: null,
    decided_by: null,
    decided_by_name: null,
    decided_at: null,
    comment: null,
    final_arguments: null,
  })
  t.equal(m.approval.digest, approvalDigest('deploy', { version: '2.4.1', regions: ['eu', 'us'], service: 'api' }), 'the digest does not depend on key order')

  const history = (await c.api({ method: 'GET', url: `/api/v1/channels/${ch.id}/messages`, headers: bearer(c.tok.member) })).json()
  t.same(history.messages[0].approval, m.approval, 'history')
  const one = (await c.api({ method: 'GET', url: `/api/v1/channels/${ch.id}/messages/${m.id}`, headers: bearer(c.tok.member) })).json()
  t.same(one.approval, m.approval, 'one message')
  const hits = (await c.api({ method: 'GET', url: '/api/v1/messages/search?q=deploy', headers: bearer(c.tok.member) })).json().results
  t.same(hits[0].approval, m.approval, 'search')
  t.same(await read(c, ch.id, m.id), m.approval, 'GET …/approval')
  const plain = (await c.api({ method: 'POST', url: `/api/v1/channels/${ch.id}/messages`, headers: bearer(c.tok.member), payload: { text: 'ok' } })).json()
  t.equal(plain.approval, null, 'an ordinary message has approval null')
  const created = c.events.find((e) => e.type === 'message.created' && (e.payload as Json).message.id === m.id)!
  t.same((created.payload as Json).message.approval, m.approval, 'message.created carries the request')

  // A reply in a thread may ask too.
  const reply = await request(t, c, ch.id, { action: 'rollback' })
  t.equal(reply.approval.action, 'rollback')
})

t.test('asking: agents only, valid input, nothing stored on a refusal', async (t) => {
  const { c, ch } = await world(t)
  const valid = { action: 'deploy', arguments: ARGS, summary: 'Deploy?' }
  const human = await ask(c, c.tok.member, ch.id, valid)
  t.equal(human.statusCode, 403)
  t.equal(human.json().code, 'FORBIDDEN')
  const bad: [Json, string][] = [
    [{ ...valid, arguments: [1, 2] }, 'arguments not an object'],
    [{ ...valid, arguments: 'x' }, 'arguments a string'],
    [{ ...valid, expires_in: 7 * 86_400 + 1 }, 'longer than 7 days'],
    [{ ...valid, expires_in: 0 }, 'expires_in 0'],
    [{ ...valid, choices: ['approve', 'maybe'] }, 'unknown choice'],
    [{ ...valid, choices: [] }, 'no choice'],
    [{ ...valid, on_expiry: 'edit' }, 'on_expiry edit'],
    [{ ...valid, approvers: ['01890000-0000-7000-8000-000000000000'] }, 'unknown approver'],
    [{ ...valid, approvers: [c.ws.agents[1]!.id] }, 'an agent as approver'],
    [{ ...valid, approvers: 'everyone' }, 'approvers word'],
    [{ ...valid, summary: '   ' }, 'blank summary'],
    [{ summary: 'x' }, 'no action'],
    [{ ...valid, arguments: { blob: 'x'.repeat(40_000) } }, 'arguments too long'],
    [{ ...valid, extra: 1 }, 'unknown property'],
  ]
  for (const [approval, what] of bad) {
    const res = await ask(c, c.tok.a1, ch.id, approval)
    t.equal(res.statusCode, 400, what)
    t.equal(res.json().code, 'VALIDATION_ERROR', what)
  }
  t.same(await approvalRows(c), [], 'no request stored')
  t.equal(await c.app.db.prisma.message.count({ where: { channelId: ch.id } }), 0, 'no message stored')
})

t.test('approve, deny, edit, respond: the outcome, its event addressed to the agent, and 409 for the next', async (t) => {
  const { c, ch } = await world(t)
  const a1 = c.ws.agents[0]!
  const cases: [Json, Json, Json][] = [
    [{}, { decision: 'approve', comment: 'go' }, { status: 'approved', decision: 'approve', final_arguments: ARGS, comment: 'go' }],
    [{}, { decision: 'deny' }, { status: 'denied', decision: 'deny', final_arguments: null, comment: null }],
    [
      { choices: ['approve', 'edit'] },
      { decision: 'edit', arguments: { ...ARGS, regions: ['eu'] } },
      { status: 'approved', decision: 'edit', final_arguments: { ...ARGS, regions: ['eu'] }, comment: null },
    ],
    [{ choices: ['approve', 'respond'] }, { decision: 'respond', comment: 'Wait until 18:00.' }, { status: 'denied', decision: 'respond', final_arguments: null, comment: 'Wait until 18:00.' }],
  ]
  for (const [asked, body, outcome] of cases) {
    const m = await request(t, c, ch.id, asked)
    const before = c.events.length
    const res = await decide(c, c.tok.member, ch.id, m.id, body)
    t.equal(res.statusCode, 200, body.decision)
    const got = res.json()
    t.same(got, { ...m.approval, ...outcome, decided_by: c.ws.member.id, decided_by_name: 'member', decided_at: got.decided_at })
    t.match(got.decided_at, ISO_RE)
    t.same(got.arguments, ARGS, 'the request itself never changes')
    t.same(await read(c, ch.id, m.id), got, 'GET reads the outcome')
    const events = c.events.slice(before)
    t.same(
      events.map((e) => [e.type, e.channelId, e.payload, e.addressed]),
      [['approval.decided', ch.id, { approval: got }, { [a1.id]: 'approval' }]],
      `${body.decision}: one event, addressed to the requesting agent`,
    )
    const later = await decide(c, c.tok.owner, ch.id, m.id, { decision: 'approve' })
    t.equal(later.statusCode, 409)
    t.same(later.json(), { error: 'this request is ' + got.status + ' already (by member)', code: 'ALREADY_DECIDED', approval: got }, 'the outcome that stands')
    const msg = (await c.api({ method: 'GET', url: `/api/v1/channels/${ch.id}/messages/${m.id}`, headers: bearer(c.tok.a1) })).json()
    t.same(msg.approval, got, 'the message shows the outcome')
  }
})

t.test('decision rules: choices offered, arguments only with edit, a comment for respond', async (t) => {
  const { c, ch } = await world(t)
  const m = await request(t, c, ch.id)
  const bad: [Json, string][] = [
    [{ decision: 'edit', arguments: { a: 1 } }, 'edit not offered'],
    [{ decision: 'respond', comment: 'x' }, 'respond not offered'],
    [{ decision: 'approve', arguments: { a: 1 } }, 'arguments with approve'],
    [{ decision: 'maybe' }, 'unknown decision'],
    [{}, 'no decision'],
    [{ decision: 'approve', extra: true }, 'unknown property'],
    [{ decision: 'approve', digest: 'nothex' }, 'malformed digest'],
  ]
  for (const [body, what] of bad) {
    const res = await decide(c, c.tok.member, ch.id, m.id, body)
    t.equal(res.statusCode, 400, what)
  }
  const m2 = await request(t, c, ch.id, { choices: ['edit', 'respond'] })
  t.same(m2.approval.choices, ['deny', 'edit', 'respond'], 'deny is always offered')
  for (const [body, what] of [
    [{ decision: 'edit' }, 'edit without arguments'],
    [{ decision: 'edit', arguments: [1] }, 'edit with an array'],
    [{ decision: 'respond' }, 'respond without comment'],
    [{ decision: 'respond', comment: '  ' }, 'respond with a blank comment'],
    [{ decision: 'approve' }, 'approve not offered'],
  ] as [Json, string][]) {
    const res = await decide(c, c.tok.member, ch.id, m2.id, body)
    t.equal(res.statusCode, 400, what)
  }
  t.same(
    (await approvalRows(c)).map((r) => r.status),
    ['pending', 'pending'],
    'nothing decided',
  )
})

t.test('who may decide: 401, 404 for a stranger and a non-member, 403 for an agent, an observer and a non-approver; nothing changes', async (t) => {
  const { c, ch } = await world(t)
  const toOwner = await request(t, c, ch.id, { approvers: 'owner' })
  const listed = await request(t, c, ch.id, { approvers: [c.ws.owner.id] })
  const members = await request(t, c, ch.id)
  const outsider = await createChannel(c.api, c.tok.a2, 'elsewhere')
  const hidden = await request(t, c, ch.id)

  t.equal((await c.api({ method: 'POST', url: url(ch.id, members.id), payload: { decision: 'approve' } })).statusCode, 401, 'no credential')
  // Not a member of the channel: as for an unknown channel.
  const other = await createChannel(c.api, c.tok.a1, 'private-ops')
  const secret = await request(t, c, other.id)
  for (const token of [c.tok.member, c.tok.a2]) {
    const res = await decide(c, token, other.id, secret.id, { decision: 'approve' })
    t.equal(res.statusCode, 404)
    t.equal(res.json().code, 'NOT_FOUND')
    t.equal((await c.api({ method: 'GET', url: url(other.id, secret.id), headers: bearer(token) })).statusCode, 404, 'nor read')
  }
  // The wrong channel for the message, and a message without a request.
  t.equal((await decide(c, c.tok.a2, outsider.id, hidden.id, { decision: 'approve' })).statusCode, 404)
  const plain = (await c.api({ method: 'POST', url: `/api/v1/channels/${ch.id}/messages`, headers: bearer(c.tok.member), payload: { text: 'hi' } })).json()
  t.equal((await decide(c, c.tok.member, ch.id, plain.id, { decision: 'approve' })).statusCode, 404)

  const refusals: [string, string, string][] = [
    [c.tok.a1, members.id, 'the requesting agent'],
    [c.tok.a2, members.id, 'another agent'],
    [c.tok.observer, members.id, 'an observer'],
    [c.tok.member, toOwner.id, 'a member when only the owner decides'],
    [c.tok.member, listed.id, 'a member not listed'],
  ]
  for (const [token, id, who] of refusals) {
    const res = await decide(c, token, ch.id, id, { decision: 'approve' })
    t.equal(res.statusCode, 403, who)
    t.equal(res.json().code, 'FORBIDDEN', who)
  }
  t.same(
    (await approvalRows(c)).map((r) => r.status),
    ['pending', 'pending', 'pending', 'pending', 'pending'],
    'nothing decided',
  )
  t.equal(c.events.filter((e) => e.type.startsWith('approval.')).length, 0, 'no event')

  // The owner reads every regular channel: it may decide for `owner` and when listed.
  t.equal((await decide(c, c.tok.owner, ch.id, toOwner.id, { decision: 'approve' })).statusCode, 200)
  t.equal((await decide(c, c.tok.owner, ch.id, listed.id, { decision: 'deny' })).statusCode, 200)
})

t.test('two people deciding at once: one decision, one 409 with it', async (t) => {
  const { c, ch } = await world(t)
  await addMember(c.api, c.tok.a1, ch.id, c.ws.owner.id)
  for (let round = 0; round < 3; round++) {
    const m = await request(t, c, ch.id)
    const [x, y] = await Promise.all([decide(c, c.tok.member, ch.id, m.id, { decision: 'approve' }), decide(c, c.tok.owner, ch.id, m.id, { decision: 'deny' })])
    const codes = [x.statusCode, y.statusCode].sort()
    t.same(codes, [200, 409], `round ${round}`)
    const winner = (x.statusCode === 200 ? x : y).json()
    const loser = (x.statusCode === 409 ? x : y).json()
    t.equal(loser.code, 'ALREADY_DECIDED')
    t.same(loser.approval, winner, 'the loser is told the decision that stands')
    t.same(await read(c, ch.id, m.id), winner)
    t.equal(c.events.filter((e) => e.type === 'approval.decided' && (e.payload as Json).approval.message_id === m.id).length, 1, 'one event')
  }
})

t.test('tampering: what was shown is what is decided', async (t) => {
  const { c, ch } = await world(t)
  const m = await request(t, c, ch.id, { choices: ['approve', 'edit'] })

  // Editing the text of a pending request is refused; no route changes its arguments.
  const edit = await c.api({ method: 'PATCH', url: `/api/v1/channels/${ch.id}/messages/${m.id}`, headers: bearer(c.tok.a1), payload: { text: 'May I deploy to staging?' } })
  t.equal(edit.statusCode, 409)
  t.equal(edit.json().code, 'CONFLICT')
  const extra = await c.api({ method: 'POST', url: url(ch.id, m.id), headers: bearer(c.tok.a1), payload: { decision: 'edit', arguments: { service: 'db' } } })
  t.equal(extra.statusCode, 403, 'the agent cannot edit its own arguments through a decision')
  const patchArgs = await c.api({ method: 'PATCH', url: `/api/v1/channels/${ch.id}/messages/${m.id}`, headers: bearer(c.tok.a1), payload: { text: 'x', approval: { arguments: {} } } })
  t.equal(patchArgs.statusCode, 400, 'an edit takes no approval')
  const repost = await c.app.inject({ method: 'PUT', url: url(ch.id, m.id), headers: bearer(c.tok.a1), payload: { arguments: {} } })
  t.equal(repost.statusCode, 405, 'no route replaces a request')
  t.same(await read(c, ch.id, m.id), m.approval, 'unchanged')

  // A digest other than the request's: refused.
  const stale = await decide(c, c.tok.member, ch.id, m.id, { decision: 'approve', digest: 'f'.repeat(64) })
  t.equal(stale.statusCode, 409)
  t.equal(stale.json().code, 'CONFLICT')

  // Arguments changed behind the API's back (in the database): the digest no longer matches.
  await c.app.db.pool.query(`UPDATE approvals SET arguments = '{"service":"db","version":"9"}' WHERE message_id = $1`, [m.id])
  for (const body of [{ decision: 'approve' }, { decision: 'approve', digest: m.approval.digest }, { decision: 'edit', arguments: ARGS }]) {
    const res = await decide(c, c.tok.member, ch.id, m.id, body)
    t.equal(res.statusCode, 409, JSON.stringify(body))
    t.equal(res.json().code, 'CONFLICT')
  }
  t.equal((await read(c, ch.id, m.id)).status, 'pending', 'not decided')
  t.equal(c.events.filter((e) => e.type.startsWith('approval.')).length, 0, 'no event')

  // Once decided, the text may be edited again; the approval stays as decided.
  const ok = await request(t, c, ch.id)
  const decided = (await decide(c, c.tok.member, ch.id, ok.id, { decision: 'approve', digest: ok.approval.digest })).json()
  const later = await c.api({ method: 'PATCH', url: `/api/v1/channels/${ch.id}/messages/${ok.id}`, headers: bearer(c.tok.a1), payload: { text: 'Deployed.' } })
  t.equal(later.statusCode, 200)
  t.same(later.json().approval, decided)
})

t.test('cancel: the requesting agent, while pending', async (t) => {
  const { c, ch } = await world(t)
  const a1 = c.ws.agents[0]!
  const m = await request(t, c, ch.id)
  const cancel = (token: string) => c.api({ method: 'POST', url: url(ch.id, m.id, '/cancel'), headers: bearer(token) })
  for (const token of [c.tok.a2, c.tok.member, c.tok.owner]) t.equal((await cancel(token)).statusCode, 403)
  const before = c.events.length
  const res = await cancel(c.tok.a1)
  t.equal(res.statusCode, 200)
  const got = res.json()
  t.same(got, { ...m.approval, status: 'cancelled', decided_by: a1.id, decided_by_name: a1.name, decided_at: got.decided_at })
  t.same(
    c.events.slice(before).map((e) => [e.type, e.payload, e.addressed]),
    [['approval.cancelled', { approval: got }, undefined]],
    'an event (not addressed: the agent did it)',
  )
  const again = await cancel(c.tok.a1)
  t.equal(again.statusCode, 409)
  t.same(again.json().approval, got)
  const late = await decide(c, c.tok.member, ch.id, m.id, { decision: 'approve' })
  t.equal(late.statusCode, 409)
  t.equal(late.json().approval.status, 'cancelled')
})

t.test('needs your decision: the pending requests the caller may decide', async (t) => {
  const { c, ch } = await world(t)
  const list = async (token: string) => (await c.api({ method: 'GET', url: '/api/v1/approvals/pending', headers: bearer(token) })).json().approvals.map((a: Json) => a.message_id)
  const soon = await request(t, c, ch.id, { expires_in: 600 })
  const ownerOnly = await request(t, c, ch.id, { approvers: 'owner' })
  const later = await request(t, c, ch.id, { expires_in: 7200, approvers: [c.ws.member.id] })
  t.same(await list(c.tok.member), [soon.id, later.id], 'soonest expiry first, only those it may decide')
  t.same(await list(c.tok.owner), [soon.id, ownerOnly.id], 'the owner: members (it reads every channel) and owner requests')
  t.same(await list(c.tok.observer), [])
  t.same(await list(c.tok.a2), [])
  await decide(c, c.tok.member, ch.id, soon.id, { decision: 'deny' })
  t.same(await list(c.tok.member), [later.id], 'a decided request leaves the list')
  t.equal((await c.api({ method: 'GET', url: '/api/v1/approvals/pending?limit=0', headers: bearer(c.tok.member) })).statusCode, 400)
})

t.test('expiry survives a restart and applies on_expiry', async (t) => {
  const first = await build(t)
  const ws = await seedWorkspace(first.app)
  const ch = await createChannel(first.api, ws.agents[0]!.key, 'night')
  await addMember(first.api, ws.agents[0]!.key, ch.id, ws.member.id)
  const post = async (approval: Json) => {
    const res = await first.api({
      method: 'POST',
      url: `/api/v1/channels/${ch.id}/messages`,
      headers: bearer(ws.agents[0]!.key),
      payload: { text: 'ok?', approval: { action: 'backup', arguments: { db: 'main' }, summary: 'Back up?', expires_in: 1, ...approval } },
    })
    t.equal(res.statusCode, 201)
    return res.json()
  }
  const denied = await post({})
  const approved = await post({ on_expiry: 'approve' })
  await first.app.close()
  await new Promise((resolve) => setTimeout(resolve, 1200))

  const second = await build(t, { databaseUrl: first.config.databaseUrl })
  const get = async (id: string) => (await second.api({ method: 'GET', url: `/api/v1/channels/${ch.id}/messages/${id}/approval`, headers: bearer(ws.agents[0]!.key) })).json()
  const deadline = Date.now() + 15_000
  while ((await get(denied.id)).status === 'pending' || (await get(approved.id)).status === 'pending') {
    if (Date.now() > deadline) break
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  const d = await get(denied.id)
  t.same(d, { ...denied.approval, status: 'expired', decision: 'deny', decided_at: denied.approval.expires_at })
  const a = await get(approved.id)
  t.same(a, { ...approved.approval, status: 'expired', decision: 'approve', decided_at: approved.approval.expires_at, final_arguments: { db: 'main' } })
  const { rows } = await second.app.db.pool.query(`SELECT payload FROM outbox_events WHERE type = 'approval.expired' ORDER BY id`)
  t.same(
    rows.map((r) => [r.payload.approval.message_id, r.payload.__addressed]).sort(),
    [
      [denied.id, { [ws.agents[0]!.id]: 'approval' }],
      [approved.id, { [ws.agents[0]!.id]: 'approval' }],
    ].sort(),
    'one approval.expired each, addressed to the agent',
  )
  const late = await second.api({ method: 'POST', url: `/api/v1/channels/${ch.id}/messages/${denied.id}/approval`, headers: bearer(ws.member.token), payload: { decision: 'approve' } })
  t.equal(late.statusCode, 409)
  t.equal(late.json().approval.status, 'expired')
})

t.test('two instances expire a request once', async (t) => {
  const first = await build(t)
  const ws = await seedWorkspace(first.app)
  const second = await build(t, { databaseUrl: first.config.databaseUrl })
  const ch = await createChannel(first.api, ws.agents[0]!.key, 'pair')
  const ids: string[] = []
  for (let i = 0; i < 5; i++) {
    const res = await first.api({
      method: 'POST',
      url: `/api/v1/channels/${ch.id}/messages`,
      headers: bearer(ws.agents[0]!.key),
      payload: { text: `q${i}`, approval: { action: 'a', summary: 's', expires_in: 1 } },
    })
    ids.push(res.json().id)
  }
  const deadline = Date.now() + 15_000
  for (;;) {
    const pending = await second.app.db.prisma.approval.count({ where: { status: 'pending' } })
    if (pending === 0 || Date.now() > deadline) break
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  const { rows } = await second.app.db.pool.query(`SELECT payload->'approval'->>'message_id' AS id FROM outbox_events WHERE type = 'approval.expired'`)
  t.same(rows.map((r) => r.id).sort(), [...ids].sort(), 'one event per request')
})
