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
  const advance = (ms: number) => {
    now += ms
    for (const d of due.filter((x) => x.at <= now).sort((a, b) => a.at - b.at)) {
      due.splice(due.indexOf(d), 1)
      d.fn()
    }
  }
  return { timers, advance }
}

const delta = (seq: number, offset: number, text: string, messageId = 'm1'): Delta => ({ channelId: 'c', messageId, threadId: null, seq, offset, text })

t.test('the first append goes at once; those within the interval go together at its end; a gap starts another frame', async (t) => {
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
  t.equal(sent.length, 2, 'another stream has its own budget')
  advance(59)
  t.equal(sent.length, 2, 'still waiting')
  advance(1)
  t.same(sent.slice(2), [{ ...delta(3, 2, 'cde') }], 'one frame, the last seq, the first offset')
  advance(30)
  co.add(delta(6, 10, 'x'))
  co.add(delta(5, 5, 'y')) // another instance's append arrived out of order with a gap
  advance(100)
  t.same(sent.slice(3), [delta(5, 5, 'y'), delta(6, 10, 'x')], 'in seq order; not merged across a gap')
  co.add(delta(7, 11, 'z'))
  co.end('m1')
  t.same(sent.at(-1), delta(7, 11, 'z'), 'end sends what waits')
})

t.test('the append window: N per second per key, then the milliseconds to wait', async (t) => {
  const w = new WindowLimit(3)
  t.same([w.admit('k', 0), w.admit('k', 10), w.admit('k', 20)], [null, null, null])
  t.equal(w.admit('k', 400), 600)
  t.equal(w.admit('other', 400), null)
  t.equal(w.admit('k', 1000), null)
})
