// Event cursors without a log (src/realtime/cursor.ts): their order, `since` forms, and the
// in-process clock that makes them.
import t from 'tap'
import { compareCursors, CursorClock, maxCursor, ORIGIN, resolveSince, SINCE_PATTERN, sinceCursor } from '../../src/realtime/cursor.ts'

t.test('cursors compare part by part, as numbers', async (t) => {
  t.ok(compareCursors('2-0', '10-0') < 0, 'not as strings: 2 < 10')
  t.ok(compareCursors('5-10', '5-9') > 0, 'the sequence decides within a millisecond')
  t.equal(compareCursors('7-3', '7-3'), 0)
  t.equal(maxCursor('5-9', '5-10'), '5-10')
  t.equal(maxCursor(ORIGIN, '1-0'), '1-0')
})

t.test('since: a cursor, a bare number, or now', async (t) => {
  const re = new RegExp(SINCE_PATTERN)
  for (const ok of ['now', '0', '1764000000000', '1764000000000-3']) t.ok(re.test(ok), `${ok} is a since`)
  for (const bad of ['', 'abc', '-1', '1-', '1-2-3', 'NOW', '1.5']) t.notOk(re.test(bad), `${JSON.stringify(bad)} is not`)
  t.equal(sinceCursor('0'), '0-0', 'a bare number N is N-0')
  t.equal(sinceCursor('12-4'), '12-4')
  t.equal(await resolveSince(undefined, async () => '9-9'), undefined, 'absent stays absent')
  t.equal(await resolveSince('now', async () => '9-9'), '9-9', 'now reads the newest cursor')
  t.equal(await resolveSince('5', async () => '9-9'), '5-0')
})

t.test('the clock never goes back and starts above its origin', async (t) => {
  const clock = new CursorClock()
  let last = clock.origin
  for (let i = 0; i < 5_000; i++) {
    const next = clock.next()
    if (compareCursors(next, last) <= 0) t.fail(`${next} after ${last}`)
    last = next
  }
  t.ok(compareCursors(last, clock.origin) > 0, `5,000 increasing cursors, the last ${last}`)
})
