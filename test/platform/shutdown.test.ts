// A stopping instance hands the delivery stream entries it holds back at once instead of leaving
// them to the claim timeout (the whole stop under load: graceful-stop.test.ts).
import t from 'tap'
import { build } from '../helper.ts'
import { RedisQueue } from '../../src/workers/queue.ts'

t.test('a stopping Redis queue hands back the entries it was handed but did not run', async (t) => {
  const { app } = await build(t, { redis: true, background: false })
  const redis = app.redis!
  const queue = new RedisQueue(redis, app.redisDuplicate, app.redisPrefix, 4, 600_000, app.log, () => {})
  const ran: string[] = []
  await queue.start(async (item) => {
    ran.push(item.id)
  })
  t.same(await queue.halt(), [], 'nothing read yet, nothing to hand back')
  // start() creates the group, but tolerates failing to (its read loop creates it later); on a
  // loaded machine that first attempt can fail, so make sure it exists before reading as the group.
  await redis.xgroup('CREATE', queue.key, 'delivery-workers', '0', 'MKSTREAM').catch((error: Error) => {
    if (!error.message.includes('BUSYGROUP')) throw error
  })
  const items = [
    { id: '0193aaaa-0000-7000-8000-000000000001', attempts: 0, endpoint: '0193bbbb-0000-7000-8000-000000000001' },
    { id: '0193aaaa-0000-7000-8000-000000000002', attempts: 2, endpoint: '0193bbbb-0000-7000-8000-000000000001' },
  ]
  await queue.enqueue(items)
  // As if the stop had interrupted a read whose reply Redis had already sent: the entries are
  // pending with this consumer, never run.
  const read = await redis.xreadgroup('GROUP', 'delivery-workers', queue.consumer, 'COUNT', 10, 'STREAMS', queue.key, '>')
  t.ok(read, 'the entries were handed to this consumer')
  t.same(await queue.halt(), items, 'returned at once, to be released in PostgreSQL')
  t.same(await queue.drain(), [], 'no attempt ran, nothing else is held')
  t.same(ran, [])
  const pending = (await redis.xpending(queue.key, 'delivery-workers')) as [number, ...unknown[]]
  t.equal(pending[0], 0, 'nothing left pending for the claim timeout')
  t.equal(await redis.xlen(queue.key), 0, 'and nothing left in the stream')
  const consumers = (await redis.xinfo('CONSUMERS', queue.key, 'delivery-workers')) as string[][]
  t.notOk(
    consumers.some((fields) => fields[fields.indexOf('name') + 1] === queue.consumer),
    'the stopped consumer left the group',
  )
})
