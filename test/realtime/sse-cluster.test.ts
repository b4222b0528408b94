// Event streams and long polls with two instances sharing PostgreSQL and Redis: what is posted on
// one reaches a stream or a waiting request on the other, and a stream resumes on either.
import t from 'tap'
import { needsRedis } from '../setup/services.ts'
import { build, testConfig } from '../helper.ts'
import { listen } from './helpers.ts'
import { baseUrl, openStream } from './sse-client.ts'
import { bearer, createChannelId, post, seedWorkspace } from '../support/index.ts'

t.test('two instances sharing Redis: streams and long polls get what the other instance commits, and resume on either', { skip: needsRedis() }, async (t) => {
  const config = await testConfig(t, { redis: true })
  const shared = { databaseUrl: config.databaseUrl, redis: true, redisPrefix: config.redisPrefix }
  const { app: one, api: apiOne } = await build(t, shared)
  const { app: two, api: apiTwo } = await build(t, shared)
  const ws = await seedWorkspace(one)
  await Promise.all([listen(one), listen(two)])
  const [a1] = ws.agents
  const channel = await createChannelId(apiOne, ws.primary.key, 'sse-cluster', [a1!.id])

  const onTwo = await openStream(baseUrl(two), a1!.key)
  const m1 = await post(apiOne, ws.primary.key, channel, 'posted on one')
  const e1 = await onTwo.stream.next((e) => e.data.message?.id === m1.id)
  t.same(e1.data.message, m1)
  await onTwo.stream.close()

  const m2 = await post(apiTwo, ws.primary.key, channel, 'posted on two while away')
  const back = await openStream(baseUrl(one), a1!.key, { lastEventId: e1.id })
  t.same(
    back.stream.logEvents().map((f) => f.message?.id),
    [m2.id],
    'replayed from the shared log on the other instance',
  )
  const m3 = await post(apiTwo, ws.primary.key, channel, 'live from two')
  t.equal((await back.stream.type('new_message', (f) => f.message.id === m3.id)).message.text, 'live from two')
  t.same(back.stream.violations, [])
  await back.stream.close()

  // A long poll waiting on instance two is woken by a post on instance one.
  const since = back.stream.logEvents().at(-1)!.cursor as string
  const waiting = fetch(`${baseUrl(two)}/api/v1/events?since=${since}&wait=30`, { headers: bearer(a1!.key) })
  for (let i = 0; i < 2_000 && two.eventStreams.open.polls < 1; i++) await new Promise((resolve) => setTimeout(resolve, 10))
  t.equal(two.eventStreams.open.polls, 1, 'parked on instance two')
  const m4 = await post(apiOne, ws.primary.key, channel, 'wakes the poll on two')
  const page = (await (await waiting).json()) as { events: { message?: { id: string } }[] }
  t.same(
    page.events.map((e) => e.message?.id),
    [m4.id],
  )
})
