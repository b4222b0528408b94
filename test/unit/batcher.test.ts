// The group commit's pacing (src/lib/batcher.ts): under concurrent load a batch starts at most
// once per interval, so that each statement carries more, unless as many items wait as recent
// batches carried (callers posting back to back are not held); a caller alone is never held.
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { Batcher } from '../../src/lib/batcher.ts'
import { restOfInterval } from '../../src/lib/pace.ts'

t.test('restOfInterval: the rest of the interval, none once passed or below a millisecond', async (t) => {
  t.equal(restOfInterval(1_000, 1_001, 3), 2, 'a round trip 1 ms ago: wait the other 2 ms')
  t.equal(restOfInterval(1_000, 1_003, 3), 0, 'the interval has passed')
  t.equal(restOfInterval(1_000, 1_002.5, 3), 0, 'under a millisecond left: no timer')
  t.equal(restOfInterval(1_000, 1_001, 0), 0, 'interval 0: never waits')
  t.equal(restOfInterval(Number.NEGATIVE_INFINITY, 5, 3), 0, 'the first round trip')
  t.equal(restOfInterval(0, 60_000, 3), 0, 'after a minute idle: no wait')
})

/** A batcher whose statement takes `ms`, recording when each batch started and what it carried. */
function recording(intervalMs: number, ms = 20) {
  const batches: { at: number; items: number[] }[] = []
  const batcher = new Batcher<number, string>(
    async (items) => {
      batches.push({ at: performance.now(), items })
      await sleep(ms)
      return items.map((i) => `done ${i}`)
    },
    { maxInFlight: 1, maxBatch: 100, minIntervalMs: intervalMs },
  )
  return { batcher, batches }
}

t.test('a caller alone, one item after another, is never held by the interval', async (t) => {
  // A hold would be the 60 s interval: each answer must come long before that.
  const { batcher, batches } = recording(60_000)
  for (let i = 0; i < 5; i++) {
    const began = performance.now()
    t.equal(await batcher.submit(i), `done ${i}`)
    t.ok(performance.now() - began < 30_000, `item ${i} answered without waiting for the interval`)
  }
  t.same(
    batches.map((b) => b.items),
    [[0], [1], [2], [3], [4]],
    'five batches of one, each at once',
  )
})

t.test('under concurrent load a batch waits for the interval, unless as many wait as recent batches carried', async (t) => {
  const interval = 2_000
  const { batcher, batches } = recording(interval)
  const answers: Promise<string>[] = []
  const submit = (...items: number[]) => answers.push(...items.map((i) => batcher.submit(i)))
  const started = (n: number) =>
    new Promise<void>((resolve) => {
      const check = () => (batches.length >= n ? resolve() : setTimeout(check, 1))
      check()
    })
  // A first item goes at once; six more queue behind it and leave together as soon as it is done
  // (no batch has carried more yet, so nothing is worth waiting for).
  submit(0)
  submit(1, 2, 3, 4, 5, 6)
  await started(2)
  // Two more while those six run: fewer than the last batch carried, so they wait for the
  // interval... until four more come, and the six go at once.
  submit(7, 8)
  await new Promise((resolve) => setTimeout(resolve, 50))
  t.equal(batches.length, 2, 'two items held while fewer wait than the last batch carried')
  submit(9, 10, 11, 12)
  await started(3)
  t.ok(batches[2]!.at - batches[1]!.at < interval, `six waiting: the batch left before the interval (${Math.round(batches[2]!.at - batches[1]!.at)} ms)`)
  // One item after them waits the whole interval (concurrent load, fewer than six waiting).
  submit(13)
  await started(4)
  t.ok(batches[3]!.at - batches[2]!.at >= interval - 1, `one item: held to the interval (${Math.round(batches[3]!.at - batches[2]!.at)} ms)`)
  // After a batch of one with nothing queued behind it, the next item goes at once.
  await answers[answers.length - 1]
  submit(14)
  await started(5)
  t.ok(batches[4]!.at - batches[3]!.at < interval, 'after a lone item, at once')
  t.same(
    await Promise.all(answers),
    Array.from({ length: 15 }, (_, i) => `done ${i}`),
    'each item its own answer',
  )
  t.same(
    batches.map((b) => b.items),
    [[0], [1, 2, 3, 4, 5, 6], [7, 8, 9, 10, 11, 12], [13], [14]],
    'the batches',
  )
})

t.test('a failed batch fails each of its items, and the next batch still runs', async (t) => {
  let fail = true
  const batcher = new Batcher<number, number>(
    async (items) => {
      if (fail) throw new Error('statement refused')
      return items
    },
    { maxInFlight: 1, maxBatch: 10, minIntervalMs: 5 },
  )
  const a = batcher.submit(1)
  const b = batcher.submit(2)
  await t.rejects(a, /statement refused/)
  await t.rejects(b, /statement refused/)
  fail = false
  t.equal(await batcher.submit(3), 3)
})
