// Concurrent posts share one INSERT statement and concurrent API-key lookups one SELECT
// (src/lib/batcher.ts). Each request must still get its own answer: its own message, its own
// 404 or 401, its own event, exactly once.
import t from 'tap'
import type pg from 'pg'
import { eventFromOutbox, newEvent, type OutboxRow } from '../../src/events/bus.ts'
import { uuidv7 } from '../../src/lib/ids.ts'
import { insertMessage, type NewMessage } from '../../src/modules/messages/repo.ts'
import { setup } from './fixtures/support.ts'
import { addMember, bearer, createChannel, messageDto } from '../support/index.ts'

/**
 * Records the most rows sent with each named statement (its first parameter: an array, or a JSON
 * array of rows) and, in `calls`, how many times each was sent.
 */
const calls = new Map<string, number>()
function spyStatements(pool: pg.Pool): Map<string, number> {
  const largest = new Map<string, number>()
  calls.clear()
  const original = pool.query.bind(pool) as (...args: unknown[]) => unknown
  ;(pool as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    const config = args[0] as { name?: string; values?: unknown[] }
    if (config && typeof config === 'object' && config.name) {
      const first = config.values?.[0]
      const size = Array.isArray(first) ? first.length : typeof first === 'string' && first.startsWith('[') ? (JSON.parse(first) as unknown[]).length : 1
      largest.set(config.name, Math.max(largest.get(config.name) ?? 0, size))
      calls.set(config.name, (calls.get(config.name) ?? 0) + 1)
    }
    return original(...args)
  }
  return largest
}

t.test('60 concurrent posts: members get 201 once each, non-members 404, a revoked key 401; nothing lost or doubled', async (t) => {
  const c = await setup(t)
  const ch = await createChannel(c.api, c.tok.a1, 'busy')
  await addMember(c.api, c.tok.a1, ch.id, c.ws.member.id)
  const revoked = c.ws.agents[1]!
  const statements = spyStatements(c.app.db.pool)
  c.events.length = 0

  const url = `/api/v1/channels/${ch.id}/messages`
  const requests = Array.from({ length: 60 }, (_, i) => {
    const who = i % 3 === 0 ? 'a1' : i % 3 === 1 ? 'member' : 'a2'
    return { i, who, promise: c.api({ method: 'POST', url, headers: bearer(c.tok[who]), payload: { text: `n${i}` } }) }
  })
  // a2 is not a member: its posts must fail one by one while the others' succeed.
  const answers = await Promise.all(requests.map(async (r) => ({ ...r, res: await r.promise })))
  for (const { i, who, res } of answers) {
    if (who === 'a2') {
      t.equal(res.statusCode, 404, `post ${i} by a non-member`)
      t.equal(res.json().code, 'NOT_FOUND')
    } else {
      t.equal(res.statusCode, 201, `post ${i} by ${who}`)
      t.equal(res.json().text, `n${i}`)
    }
  }
  const created = answers.filter((a) => a.who !== 'a2').map((a) => a.res.json())
  const stored = await c.app.db.prisma.message.findMany({ where: { channelId: ch.id }, orderBy: { id: 'asc' } })
  t.same(stored.map((m) => m.id).sort(), created.map((m) => m.id).sort(), 'exactly the acknowledged messages are stored')
  t.same(new Set(stored.map((m) => m.text)).size, 40, 'no duplicates')
  const events = c.events.filter((e) => e.type === 'message.created')
  t.same(events.map((e) => (e.payload.message as { id: string }).id).sort(), created.map((m) => m.id).sort(), 'one message.created per message')
  t.equal(await c.app.db.prisma.outboxEvent.count({ where: { type: 'message.created' } }), 40)
  t.ok((statements.get('post-messages-batch-guarded') ?? 0) > 1, 'several posts shared one INSERT (with the loop guard in it: on by default)')
  // A shared statement that failed would send its rows again one by one: few went alone.
  t.ok((calls.get('post-message-false-false-0-guarded') ?? 0) < 20, `few posts went alone (${calls.get('post-message-false-false-0-guarded') ?? 0})`)
  t.ok((statements.get('auth-agent-keys') ?? 0) > 1, 'several requests shared one key lookup')

  // A key revoked while its requests queue with others is refused; the others are not affected.
  const revoke = await c.api({ method: 'DELETE', url: `/api/v1/agents/${revoked.id}/keys/${revoked.keyId}`, headers: bearer(c.ws.owner.token) })
  t.equal(revoke.statusCode, 204)
  const mixed = await Promise.all(Array.from({ length: 20 }, (_, i) => c.api({ method: 'GET', url: `/api/v1/channels/${ch.id}`, headers: bearer(i % 2 ? revoked.key : c.tok.a1) })))
  mixed.forEach((res, i) => t.equal(res.statusCode, i % 2 ? 401 : 200, `lookup ${i}`))
})

t.test('a row that fails inside a shared statement fails alone; the rest of the batch is stored', async (t) => {
  const c = await setup(t)
  const ch = await createChannel(c.api, c.tok.a1, 'batch')
  const author = c.ws.agents[0]!
  const row = (text: string, eventId?: string): NewMessage => {
    const id = uuidv7()
    const message = messageDto({ id, channel_id: ch.id, author_id: author.id, author_name: author.name, text, created_at: new Date().toISOString() })
    const event = newEvent('message.created', ch.id, { message })
    if (eventId) event.id = eventId
    return { id, channelId: ch.id, authorId: author.id, authorType: 'AGENT', authorName: author.name, text, createdAt: new Date(), inReplyToEvent: null, chainDepth: 1, event }
  }
  // Two rows carry the same event id: the outbox's unique key accepts only one of them.
  const clash = uuidv7()
  const rows = Array.from({ length: 12 }, (_, i) => row(`r${i}`, i === 8 || i === 9 ? clash : undefined))
  const statements = spyStatements(c.app.db.pool)
  const outcomes = await Promise.allSettled(rows.map((r) => insertMessage(c.app.ctx, r)))

  t.ok((statements.get('post-messages-batch') ?? 0) > 1, 'the rows went out in shared statements')
  const failed = outcomes.flatMap((o, i) => (o.status === 'rejected' ? [i] : []))
  t.equal(failed.length, 1, 'exactly one of the clashing rows fails')
  t.ok(failed[0] === 8 || failed[0] === 9)
  t.equal((outcomes[failed[0]!] as PromiseRejectedResult).reason.code, '23505')
  for (const [i, o] of outcomes.entries()) if (i !== failed[0]) t.same(o, { status: 'fulfilled', value: { kind: 'inserted' } }, `row ${i} stored`)
  t.equal(await c.app.db.prisma.message.count({ where: { channelId: ch.id } }), 11)
})

t.test('idempotent posts share the batched INSERT, which looks their keys up itself; twins in one batch store one message', async (t) => {
  const c = await setup(t)
  const ch = await createChannel(c.api, c.tok.a1, 'keys')
  const statements = spyStatements(c.app.db.pool)
  const url = `/api/v1/channels/${ch.id}/messages`
  const post = (key: string, text: string) => c.api({ method: 'POST', url, headers: { ...bearer(c.tok.a1), 'idempotency-key': key }, payload: { text } })
  const distinct = await Promise.all(Array.from({ length: 30 }, (_, i) => post(`k-${i}`, `keyed ${i}`)))
  t.same([...new Set(distinct.map((r) => r.statusCode))], [201])
  t.ok((statements.get('post-messages-batch-guarded') ?? 0) > 1, 'keyed posts went out in shared statements')
  t.ok((calls.get('post-message-false-true-0-guarded') ?? 0) < 15, `few keyed posts went alone (${calls.get('post-message-false-true-0-guarded') ?? 0})`)
  t.notOk(
    [...statements.keys()].some((name) => /idempotency|remembered/i.test(name)),
    'no lookup of its own',
  )

  // Retries of those: the remembered responses, nothing new.
  const retries = await Promise.all(Array.from({ length: 30 }, (_, i) => post(`k-${i}`, `keyed ${i}`)))
  retries.forEach((r, i) => {
    t.equal(r.statusCode, 201)
    t.equal(r.json().id, distinct[i]!.json().id, `retry ${i} answers the original`)
  })
  t.equal((await post('k-3', 'another body')).json().code, 'IDEMPOTENCY_KEY_REUSED')

  // Ten twins at once with one key: one message, every answer the same.
  const twins = await Promise.all(Array.from({ length: 10 }, () => post('twin', 'only once')))
  t.same([...new Set(twins.map((r) => r.statusCode))], [201])
  t.equal(new Set(twins.map((r) => r.json().id)).size, 1, 'one message for all ten')
  t.equal(await c.app.db.prisma.message.count({ where: { channelId: ch.id } }), 31)
  t.equal(await c.app.db.prisma.idempotencyKey.count(), 31)
})

t.test('a shared statement stores each row exactly: text, event payload with its addressees, remembered response', async (t) => {
  const c = await setup(t)
  const ch = await createChannel(c.api, c.tok.a1, 'exact')
  const author = c.ws.agents[0]!
  // What JSON and array literals each escape their own way.
  const texts = ['plain', 'quotes " and \\ backslashes \\"', 'new\nline\ttab', 'emoji 🧪 and accents é', 'braces {a,b} and "NULL"', 'NULL', '', 'line\u2028separator']
  const rows: NewMessage[] = texts.map((text, i) => {
    const id = uuidv7()
    const message = messageDto({ id, channel_id: ch.id, author_id: author.id, author_name: author.name, text, created_at: new Date().toISOString() })
    const event = newEvent('message.created', ch.id, { message })
    if (i % 2) event.addressed = { [c.ws.member.id]: 'mention' }
    const idempotency = i % 3 === 0 ? { key: `exact-${i}`, hash: `hash-${i}`, body: { ...message, note: 'remembered "as is"' } } : undefined
    return {
      id,
      channelId: ch.id,
      authorId: author.id,
      authorType: 'AGENT',
      authorName: author.name,
      text,
      createdAt: new Date(),
      inReplyToEvent: null,
      chainDepth: 1,
      event,
      ...(idempotency ? { idempotency } : {}),
    }
  })
  const statements = spyStatements(c.app.db.pool)
  const outcomes = await Promise.all(rows.map((r) => insertMessage(c.app.ctx, r)))
  t.same(
    outcomes,
    rows.map(() => ({ kind: 'inserted' })),
  )
  t.ok((statements.get('post-messages-batch') ?? 0) > 1, 'the rows went out in shared statements')

  const stored = await c.app.db.prisma.message.findMany({ where: { channelId: ch.id } })
  const byId = new Map(stored.map((m) => [m.id, m]))
  const { rows: outbox } = await c.app.db.pool.query<OutboxRow>('SELECT id::text, event_id::text, type, channel_id::text, payload, occurred_at FROM outbox_events WHERE event_id = ANY($1::uuid[])', [
    rows.map((r) => r.event.id),
  ])
  const events = new Map(outbox.map((o) => [o.event_id, eventFromOutbox(o)]))
  for (const [i, r] of rows.entries()) {
    // Named by index: a raw line separator in an assertion's name breaks the TAP stream.
    t.equal(byId.get(r.id)?.text, r.text, `text ${i} stored as sent`)
    t.equal(byId.get(r.id)?.createdAt.getTime(), r.createdAt.getTime(), 'created_at to the millisecond')
    t.same(events.get(r.event.id), r.event, 'the outbox event reads back as emitted, addressees included')
  }
  const remembered = await c.app.db.prisma.idempotencyKey.findMany({ where: { principalId: author.id } })
  t.same(
    new Map(remembered.map((k) => [k.key, [k.requestHash, k.statusCode, k.responseBody]])),
    new Map(rows.flatMap((r) => (r.idempotency ? [[r.idempotency.key, [r.idempotency.hash, 201, r.idempotency.body]]] : []))),
    'each remembered response as given',
  )
})
