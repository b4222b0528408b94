// Issue 29, item 5: password checks are queued fairly per client address and per account, and the
// heaviest caller is shed first, so a flood of guesses on one account does not queue other
// people's logins (no 429 for it: the flood waits behind them, or gets 503 + Retry-After).
// The queue's rules on their own, then through the real login route. Orderings, not timings.
import t from 'tap'
import { BCRYPT_KEY_LIMIT, bcryptQueueState } from '../../src/lib/bcrypt-pool.ts'
import { FairQueue } from '../../src/lib/fair-queue.ts'
import { build, FIXTURE_PASSWORD, seedWorkspace } from '../support/index.ts'

const owner = ['address:a', 'account:owner']

/** Takes every waiting item in the order the queue runs them, finishing each at once. */
function drain<T>(queue: FairQueue<T>): T[] {
  const order: T[] = []
  for (let next = queue.next(); next; next = queue.next()) {
    order.push(next.item)
    queue.done(next.keys)
  }
  return order
}

t.test('the fair queue', async (t) => {
  await t.test("a newcomer overtakes a flood on another account, from the flood's address too", async (t) => {
    const queue = new FairQueue<string>({ limit: 100, perKeyLimit: 100 })
    for (let i = 1; i <= 5; i++) queue.push(`flood${i}`, owner)
    const running = queue.next()!
    t.equal(running.item, 'flood1', 'first come, first served while alone')
    queue.push('member', ['address:a', 'account:member'])
    queue.push('stranger', ['address:b', 'account:other'])
    queue.done(running.keys)
    t.same(drain(queue), ['stranger', 'member', 'flood2', 'flood3', 'flood4', 'flood5'], 'the least loaded first; the flood keeps its own order')
  })

  await t.test('a flood on one account from many addresses waits behind another account', async (t) => {
    const queue = new FairQueue<string>({ limit: 100, perKeyLimit: 100 })
    for (let i = 1; i <= 4; i++) queue.push(`guess${i}`, [`address:${i}`, 'account:owner'])
    queue.push('member', ['address:9', 'account:member'])
    t.same(drain(queue), ['member', 'guess1', 'guess2', 'guess3', 'guess4'])
  })

  await t.test('a spray of accounts from one address waits behind another address', async (t) => {
    const queue = new FairQueue<string>({ limit: 100, perKeyLimit: 100 })
    for (let i = 1; i <= 4; i++) queue.push(`spray${i}`, ['address:bot', `account:${i}`])
    queue.push('member', ['address:home', 'account:member'])
    t.same(drain(queue), ['member', 'spray1', 'spray2', 'spray3', 'spray4'])
  })

  await t.test('one key over its bound: its heaviest, newest item is shed, not a newcomer sharing the address', async (t) => {
    const queue = new FairQueue<string>({ limit: 100, perKeyLimit: 3 })
    t.same(queue.push('flood1', owner), [])
    t.same(queue.push('flood2', owner), [])
    t.same(queue.push('flood3', owner), [])
    t.same(queue.push('flood4', owner), ['flood4'], 'the fourth of the account is shed at once')
    t.same(queue.push('member', ['address:a', 'account:member']), ['flood3'], "the address is over its bound: the flood's newest goes, the member stays")
    t.equal(queue.loadOf('address:a'), 3)
    t.equal(queue.loadOf('account:owner'), 2)
    t.same(drain(queue), ['member', 'flood1', 'flood2'])
    t.equal(queue.loadOf('address:a'), 0, 'loads return to nothing')
  })

  await t.test('running items count toward their keys until done', async (t) => {
    const queue = new FairQueue<string>({ limit: 100, perKeyLimit: 2 })
    queue.push('flood1', owner)
    queue.push('flood2', owner)
    const first = queue.next()!
    t.same(queue.push('flood3', owner), ['flood3'], 'one running and one waiting fill the bound')
    queue.done(first.keys)
    t.same(queue.push('flood4', owner), [], 'room again once the running one is done')
  })

  await t.test('the global bound sheds the heaviest caller first', async (t) => {
    const queue = new FairQueue<string>({ limit: 4, perKeyLimit: 100 })
    queue.push('flood1', owner)
    queue.push('flood2', owner)
    queue.push('flood3', owner)
    queue.push('one', ['address:b', 'account:b'])
    t.same(queue.push('two', ['address:c', 'account:c']), ['flood3'], 'the queue was full: the flood gives way')
    t.same(queue.push('flood4', owner), ['flood4'], 'the flood itself arriving at a full queue is refused')
    t.equal(queue.size, 4)
    t.same(drain(queue), ['one', 'two', 'flood1', 'flood2'])
  })
})

t.test('logins under a flood of guesses on the owner account', async (t) => {
  // The failure limit is the other defence (429 after N failures); it is out of the way here.
  const { app } = await build(t, { realPasswordCost: true, env: { LOGIN_FAILURES_PER_ACCOUNT: '100000', LOGIN_FAILURES_PER_ADDRESS: '100000' } })
  const ws = await seedWorkspace(app)
  const login = (email: string, password: string, remoteAddress: string) =>
    app.inject({ method: 'POST', url: '/api/v1/auth/login', remoteAddress, headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ email, password }) })

  await t.test("another person's login overtakes guesses already waiting", async (t) => {
    // Guesses on the owner's account up to its bound, from as many addresses.
    let answered = 0
    const flood = Array.from({ length: BCRYPT_KEY_LIMIT }, (_, i) =>
      login(ws.owner.email, `wrong guess number ${i}`, `10.9.0.${i + 1}`).then((res) => {
        answered++
        return res
      }),
    )
    // Every guess is in the password queue (waiting or running), or answered, before the member logs in.
    while (bcryptQueueState({ account: ws.owner.email }).load[0]! + answered < flood.length) await new Promise((resolve) => setTimeout(resolve, 5))
    const member = await login(ws.member.email, FIXTURE_PASSWORD, '192.0.2.10')
    const before = answered
    t.equal(member.statusCode, 200)
    const statuses = (await Promise.all(flood)).map((r) => r.statusCode)
    t.same([...new Set(statuses)], [401], 'every guess was checked (none shed: the account stayed within its bound)')
    t.ok(before < flood.length, `the member was answered before the guesses that waited (${before} of ${flood.length} answered first; first come, first served would be all of them)`)
  })

  await t.test('guesses beyond the bound of one account are shed with 503, never 429; the member still logs in', async (t) => {
    const flood = Array.from({ length: BCRYPT_KEY_LIMIT * 2 }, (_, i) => login(ws.owner.email, `wrong guess number ${i}`, `10.8.0.${i + 1}`))
    const member = login(ws.member.email, FIXTURE_PASSWORD, '192.0.2.11')
    const answers = await Promise.all(flood)
    t.equal((await member).statusCode, 200)
    const statuses = answers.map((r) => r.statusCode)
    t.same([...new Set(statuses)].sort(), [401, 503], 'checked or shed; no 429')
    for (const res of answers.filter((r) => r.statusCode === 503)) {
      t.same(res.json(), { error: 'too many password checks in progress; retry shortly', code: 'SERVICE_UNAVAILABLE' })
      t.equal(res.headers['retry-after'], '1')
    }
    t.same(bcryptQueueState({ account: ws.owner.email }), { waiting: 0, load: [0] }, 'nothing left behind')
  })
})
