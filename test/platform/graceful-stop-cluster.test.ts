// SIGTERM to one of two instances (Redis) under load, while the other runs: the stopping one
// hands back what it claimed (its PostgreSQL claims and the stream entries it holds), and the other
// delivers every stored message to both receivers within 30 s (the lease is 60 s here). The single
// instance and its restart: graceful-stop.test.ts.
import t from 'tap'
import { freePort, startServer } from '../processes.ts'
import { checkOutcomes, DELIVERED_WITHIN_MS, deliveredWithin, deliveryStates, scene, stopUnderLoad, storedIds } from './stop-load.ts'

t.test('SIGTERM to one of two instances: the other sends what it handed back', async (t) => {
  const s = await scene(t, true)
  const [stopping, staying] = await Promise.all([startServer(t, s.env(await freePort())), startServer(t, s.env(await freePort()))])
  const outcomes = await stopUnderLoad(t, s, stopping)
  checkOutcomes(t, outcomes)
  // Consumers are named <host>-<pid>-<random> (src/workers/queue.ts).
  const consumers = (await s.app.redis!.xinfo('CONSUMERS', `${s.app.redisPrefix}deliveries`, 'delivery-workers')) as (string | number)[][]
  const ofStopped = consumers.filter((fields) => String(fields[fields.indexOf('name') + 1]).includes(`-${stopping.proc.pid}-`))
  t.same(ofStopped, [], 'the stopped instance left the delivery consumer group, holding no stream entry')
  const stored = await storedIds(s.app, s.channelId)
  s.fast.value = true
  const missing = await deliveredWithin(s, [...stored.values()], DELIVERED_WITHIN_MS)
  t.same(missing, { webhook: [], integration: [] }, `the other instance delivered every stored message (${stored.size}) to both receivers within ${DELIVERED_WITHIN_MS / 1000} s`, {
    deliveries: await deliveryStates(s.app, missing),
  })
  t.equal(staying.proc.exitCode, null, 'the other instance still runs')
})
