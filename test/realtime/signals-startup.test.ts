// Signals (typing, status, presence) published while the Redis connection is not ready yet are
// held and sent once it is, not refused one by one with a warning each (1,000 sockets connecting
// right after start-up logged 45 "could not publish a signal").
import type { FastifyBaseLogger } from 'fastify'
import t from 'tap'
import { createRedis } from '../../src/plugins/redis.ts'
import { Signals, type Signal } from '../../src/realtime/signals.ts'
import { needsRedis, services } from '../setup/services.ts'

function recordingLog(): { log: FastifyBaseLogger; warnings: string[] } {
  const warnings: string[] = []
  const log = { warn: (_obj: unknown, message: string) => warnings.push(message), error: (_obj: unknown, message: string) => warnings.push(message) }
  return { log: log as unknown as FastifyBaseLogger, warnings }
}

const presence = (n: number): Signal => ({
  channelIds: [],
  except: null,
  frame: { type: 'presence', member_id: `00000000-0000-7000-8000-00000000000${n}`, member_type: 'AGENT', online: true, last_seen_at: new Date(0).toISOString() },
})

t.test('signals published before the connection is ready arrive once it is, with nothing logged', { skip: needsRedis() }, async (t) => {
  const url = services.redisUrl!
  const channel = `test:signals-startup:${process.pid}:${Date.now()}`
  const publisher = createRedis(url, { lazyConnect: true })
  const subscribers: ReturnType<typeof createRedis>[] = []
  const delivered: Signal[] = []
  const { log, warnings } = recordingLog()
  const signals = new Signals((signal) => delivered.push(signal), log, {
    publisher,
    subscriber: () => {
      const sub = createRedis(url)
      subscribers.push(sub)
      return sub
    },
    channel,
  })
  t.teardown(async () => {
    await signals.stop()
    publisher.disconnect()
    for (const sub of subscribers) sub.disconnect()
  })
  await signals.start()

  t.not(publisher.status, 'ready', 'the publishing connection is not ready yet')
  signals.publish(presence(1))
  signals.publish(presence(2))
  await publisher.connect()
  for (let n = 0; n < 200 && delivered.length < 2; n++) await new Promise((resolve) => setTimeout(resolve, 10))
  t.same(
    delivered.map((s) => (s.frame as { member_id: string }).member_id),
    [presence(1), presence(2)].map((s) => (s.frame as { member_id: string }).member_id),
    'both arrived, in order',
  )
  t.same(warnings, [], 'no warning')

  // Once ready, a signal goes straight out.
  signals.publish(presence(3))
  for (let n = 0; n < 200 && delivered.length < 3; n++) await new Promise((resolve) => setTimeout(resolve, 10))
  t.equal(delivered.length, 3)
})
