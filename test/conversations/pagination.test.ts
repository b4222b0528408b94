import t from 'tap'
import { setup } from './fixtures/support.ts'
import { bearer, createChannel, disableLoopGuard } from '../support/index.ts'

t.test('250 messages in pages of 100: no duplicates or gaps walking back and walking forward', async (t) => {
  const c = await setup(t)
  await disableLoopGuard(c.app) // 250 agent messages in a row: not what this tests
  const ch = await createChannel(c.api, c.tok.a1, 'history')
  const url = `/api/v1/channels/${ch.id}/messages`
  const posted: string[] = []
  for (let i = 0; i < 250; i++) {
    const res = await c.api({ method: 'POST', url, headers: bearer(c.tok.a1), payload: { text: `message ${i}` } })
    posted.push(res.json().id)
  }
  const newestFirst = [...posted].reverse()

  // Walking back from the newest.
  const back: string[] = []
  const sizes: number[] = []
  let query = 'limit=100'
  for (;;) {
    const res = await c.api({ method: 'GET', url: `${url}?${query}`, headers: bearer(c.tok.a1) })
    t.equal(res.statusCode, 200)
    const page = res.json()
    sizes.push(page.messages.length)
    back.push(...page.messages.map((m: any) => m.id))
    t.equal(page.next_before, page.messages.at(-1)?.id ?? null)
    if (!page.has_more) break
    query = `limit=100&before=${page.next_before}`
  }
  t.same(sizes, [100, 100, 50])
  t.same(back, newestFirst, 'every message once, newest first')

  // Walking forward from before the oldest.
  const forward: string[][] = []
  const after = (await c.api({ method: 'GET', url: `${url}?limit=1&before=${posted[0]}`, headers: bearer(c.tok.a1) })).json()
  t.same(after, { messages: [], has_more: false, next_before: null, next_after: null })
  let cursor = '00000000-0000-7000-8000-000000000000'
  for (;;) {
    const res = await c.api({ method: 'GET', url: `${url}?limit=100&after=${cursor}`, headers: bearer(c.tok.a1) })
    const page = res.json()
    forward.push(page.messages.map((m: any) => m.id))
    if (!page.has_more) break
    cursor = page.next_after
  }
  t.same(
    forward.map((p) => p.length),
    [100, 100, 50],
  )
  t.same(
    forward.map((p) => p[0]),
    [posted[99], posted[199], posted[249]],
    'each page is newest first',
  )
  t.same(
    forward.flatMap((p) => [...p].reverse()),
    posted,
    'every message once, oldest page first',
  )

  // Defaults and limits.
  const first = (await c.api({ method: 'GET', url, headers: bearer(c.tok.a1) })).json()
  t.equal(first.messages.length, 50, 'default limit 50')
  t.equal(first.has_more, true)
  t.same(
    first.messages.map((m: any) => m.id),
    newestFirst.slice(0, 50),
  )
  const latest = (await c.api({ method: 'GET', url: `${url}?after=${posted[247]}`, headers: bearer(c.tok.a1) })).json()
  t.same(
    latest.messages.map((m: any) => m.id),
    [posted[249], posted[248]],
  )
  t.equal(latest.has_more, false)
  t.equal(latest.next_after, posted[249])
  for (const q of ['limit=101', 'limit=0', 'limit=-1', 'limit=abc', 'before=nope', 'after=1', 'other=1', `before=${posted[5]}&after=${posted[1]}`]) {
    const res = await c.api({ method: 'GET', url: `${url}?${q}`, headers: bearer(c.tok.a1) })
    t.equal(res.statusCode, 400, q)
  }
  t.equal((await c.api({ method: 'GET', url: `${url}?before=${posted[5]}&after=${posted[1]}`, headers: bearer(c.tok.a1) })).json().code, 'INVALID_CURSOR')
  const exactly100 = (await c.api({ method: 'GET', url: `${url}?limit=100&before=${posted[100]}`, headers: bearer(c.tok.a1) })).json()
  t.equal(exactly100.messages.length, 100)
  t.equal(exactly100.has_more, false, 'no phantom page when exactly limit remain')

  // A deleted message still works as a cursor.
  await c.api({ method: 'DELETE', url: `${url}/${posted[150]}`, headers: bearer(c.tok.a1) })
  const afterDeleted = (await c.api({ method: 'GET', url: `${url}?limit=2&before=${posted[150]}`, headers: bearer(c.tok.a1) })).json()
  t.same(
    afterDeleted.messages.map((m: any) => m.id),
    [posted[149], posted[148]],
  )
})
