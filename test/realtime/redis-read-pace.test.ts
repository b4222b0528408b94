// The Redis read loop reads at most once per EVENT_READ_INTERVAL_MS under load (several events per
// XREAD), reads at once when idle or when its last read returned a full batch, and loses or
// reorders nothing either way. The broker runs here on its own, on a stream key of this test.
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyBaseLogger } from 'fastify'
import type { Redis } from 'ioredis'
import t, { type Test } from 'tap'
import { newEvent } from '../../src/events/bus.ts'
import { uuidv7 } from '../../src/lib/ids.ts'
import { createRedis } from '../../src/plugins/redis.ts'
import { encodeEvent, type LogEntry } from '../../src/realtime/broker.ts'
import { compareCursors } from '../../src/realtime/cursor.ts'
import { ENTRY_FIELD, RedisBroker } from '../../src/realtime/redis-broker.ts'
import { needsRedis, services } from '../setup/services.ts'

interface Harness {
  broker: RedisBroker
  /** A connection of the test's own, and the broker's stream key. */
  client: Redis
  key: string
  delivered: LogEntry[]
  /** XREAD commands the loop has sent so far. */
  reads: () => number
  /** What the broker warned of or reported as an error (nothing, in these tests). */
  logged: string[]
}

async function harness(t: Test, intervalMs: number): Promise<Harness> {
  const url = services.redisUrl!
  const prefix = `ams-test-pace-${uuidv7()}:`
  const client = createRedis(url, { lazyConnect: true })
  await client.connect()
  let reads = 0
  const readers: Redis[] = []
  const duplicate = (): Redis => {
    const reader = createRedis(url)
    const xread = reader.xread.bind(reader) as (...args: unknown[]) => Promise<unknown>
    ;(reader as unknown as { xread: (...args: unknown[]) => Promise<unknown> }).xread = (...args: unknown[]) => {
      reads += 1
      return xread(...args)
    }
    readers.push(reader)
    return reader
  }
  const logged: string[] = []
  const note = (_obj: unknown, message?: string): void => void logged.push(String(message ?? _obj))
  const log = { warn: note, error: note } as unknown as FastifyBaseLogger
  const broker = new RedisBroker(client, duplicate, prefix, 100_000, log, intervalMs)
  const delivered: LogEntry[] = []
  broker.onEntries((entries) => delivered.push(...entries))
  await broker.start()
  await broker.reading()
  t.teardown(async () => {
    await broker.stop()
    await client.del(`${prefix}events`)
    client.disconnect()
    for (const reader of readers) reader.disconnect()
  })
  return { broker, client, key: `${prefix}events`, delivered, reads: () => reads, logged }
}

const event = (i: number) => newEvent('channel.deleted', `c${i}`, { channel_id: `c${i}` })

async function until(what: string, done: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms
  while (!done()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await sleep(5)
  }
}

t.test('Redis: a paced loop reads several events per XREAD, in order, none lost', { skip: needsRedis() }, async (t) => {
  const interval = 250
  const { broker, delivered, reads, logged } = await harness(t, interval)
  const before = reads()
  const began = performance.now()
  const sent: string[] = []
  // 40 events, one publish every 10 ms: about 400 ms of steady load.
  for (let i = 0; i < 40; i++) {
    const e = event(i)
    sent.push(e.id)
    await broker.publish([e])
    await sleep(10)
  }
  await until('every event', () => delivered.length >= sent.length)
  const elapsed = performance.now() - began
  t.same(
    delivered.map((d) => d.event.id),
    sent,
    'every event once, in the order published',
  )
  const cursors = delivered.map((d) => d.cursor)
  t.ok(
    cursors.every((c, i) => i === 0 || compareCursors(cursors[i - 1]!, c) < 0),
    'cursors ascend',
  )
  // Unpaced, the loop reads about once per publish (40 here). Paced, at most once per interval
  // (plus the blocking read that was waiting when the first event came, and the next one).
  const used = reads() - before
  const bound = Math.ceil(elapsed / interval) + 2
  t.ok(used <= bound, `${used} XREADs for 40 events over ${Math.round(elapsed)} ms (at most ${bound})`)
  t.same(logged, [], 'no warning or error logged')
})

t.test('Redis: a paced loop behind by a full batch reads on without waiting', { skip: needsRedis() }, async (t) => {
  // An interval far longer than the test: a wait for it after any read would time the test out.
  const { client, key, delivered, reads, logged } = await harness(t, 60_000)
  // 2,500 events in one transaction: the blocking read wakes once they are all in the stream and
  // takes 1,000 (a full batch), then reads on at once: 1,000 more, then the last 500.
  const backlog = Array.from({ length: 2_500 }, (_, i) => event(i))
  const before = reads()
  const multi = client.multi()
  for (const e of backlog) multi.xadd(key, '*', ENTRY_FIELD, encodeEvent(e))
  await multi.exec()
  await until('the backlog', () => delivered.length >= backlog.length)
  t.same(
    delivered.map((d) => d.event.id),
    backlog.map((e) => e.id),
    'all 2,500, in order',
  )
  t.equal(reads() - before, 2, 'after the blocking read woke with a full batch: two more at once (a full batch, then the rest), none waiting the 60 s interval')
  t.same(logged, [], 'no warning or error logged')
})
