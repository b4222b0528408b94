// The coalescing of a stream's deltas and the per-stream append window (issue 25), as pure logic
// with an injected clock and timer: no server.
import t from 'tap'
import { DeltaCoalescer, WindowLimit, type Delta, type Timers } from '../../src/modules/streams/deltas.ts'

function fakeTimers() {
  let now = 0
  const due: { at: number; fn: () => void; id: number }[] = []
  let ids = 0
  const timers: Timers = {
    now: () => now,
    setTimeout: (fn, ms) => {
      const id = ++ids
      due.push({ at: now + ms, fn, id })
      return id
    },
    clearTimeout: (id) => {
      const i = due.findIndex((d) => d.id === id)
      if (i >= 0) due.splice(i, 1)
    },
  }
  // Fires each timer due by then at its own time, in order.
  const advance = (ms: number) => {
    const until = now + ms
    for (;;) {
      const next = due.filter((x) => x.at <= until).sort((a, b) => a.at - b.at)[0]
      if (!next) break
      due.splice(due.indexOf(next), 1)
      now = next.at
      next.fn()
    }
    now = until
  }
  return { timers, advance }
}

const delta = (seq: number, offset: number, text: string, messageId = 'm1'): Delta => ({ channelId: 'c', messageId, threadId: null, seq, offset, text })

t.test('frames are a gap apart: an append past the gap goes at once with what waits; one sooner waits, the gap at most', async (t) => {
  const { timers, advance } = fakeTimers()
  const sent: Delta[] = []
  const co = new DeltaCoalescer((d) => sent.push(d), 100, timers)
  co.add(delta(1, 0, 'ab'))
  t.same(sent, [delta(1, 0, 'ab')], 'at once')
  advance(20)
  co.add(delta(2, 2, 'cd'))
  advance(20)
  co.add(delta(3, 4, 'e'))
  co.add(delta(4, 5, 'f', 'm2'))
  t.equal(sent.length, 2, 'another stream has its own gap')
  advance(59)
  t.equal(sent.length, 2, 'still waiting (99 ms since the last frame)')
  advance(1)
  co.add(delta(4, 5, 'g'))
  t.same(sent.slice(2), [delta(4, 2, 'cdeg')], 'the append past the gap takes what waited: one frame, the last seq, the first offset')

  // No append comes: what waits goes out a gap after it came.
  advance(30)
  co.add(delta(6, 10, 'x'))
  co.add(delta(5, 6, 'y')) // another instance's append arrived out of order with a gap
  advance(99)
  t.equal(sent.length, 3)
  advance(1)
  t.same(sent.slice(3), [delta(5, 6, 'y'), delta(6, 10, 'x')], 'in seq order; not merged across a gap')
  co.add(delta(7, 11, 'z'))
  co.end('m1')
  t.same(sent.at(-1), delta(7, 11, 'z'), 'end sends what waits')
})

t.test('a stream appending every 50 ms (with jitter) gets every other append sent at once: 10 frames a second, no wait of a gap', async (t) => {
  const { timers, advance } = fakeTimers()
  const sent: { at: number; d: Delta }[] = []
  let now = 0
  const co = new DeltaCoalescer((d) => sent.push({ at: timers.now(), d }), 80, timers)
  const arrivals: number[] = []
  let offset = 0
  for (let i = 0; i < 200; i++) {
    // Every 50 ms, up to 12 ms early or late (a pseudo-random but fixed sequence).
    const at = i * 50 + (((i * 7919) % 25) - 12)
    advance(at - now)
    now = at
    arrivals.push(at)
    co.add(delta(i + 1, offset, 'x'))
    offset += 1
  }
  advance(100)
  // The last append has none after it: it goes out by the timer, a gap after it came.
  const waits = arrivals.map((at, i) => sent.find((s) => s.d.seq >= i + 1)!.at - at)
  t.equal(waits.pop(), 80, 'the last one: by the timer')
  t.ok(Math.max(...waits) < 80, `no other append waited the whole gap (the longest: ${Math.max(...waits)} ms)`)
  t.equal(waits.filter((w) => w === 0).length, sent.length - 1, 'every other frame went out on an arrival')
  const gaps = sent.slice(1).map((s, i) => s.at - sent[i]!.at)
  t.ok(Math.min(...gaps) >= 80, 'frames at least the gap apart')
  t.ok(sent.length <= 102 && sent.length >= 98, `about 10 frames a second (${sent.length} over 10 s)`)
})

t.test('the append window: N per second per key, then the milliseconds to wait', async (t) => {
  const w = new WindowLimit(3)
  t.same([w.admit('k', 0), w.admit('k', 10), w.admit('k', 20)], [null, null, null])
  t.equal(w.admit('k', 400), 600)
  t.equal(w.admit('other', 400), null)
  t.equal(w.admit('k', 1000), null)
})
