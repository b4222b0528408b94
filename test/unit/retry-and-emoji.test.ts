// Two small rules without a server: the retry schedule of deliveries (src/workers/retry.ts) and
// what a reaction may be (src/modules/reactions/emoji.ts).
import t from 'tap'
import { isReactionEmoji, MAX_EMOJI_LENGTH } from '../../src/modules/reactions/emoji.ts'
import { DEFAULT_RETRY_SCHEDULE, JITTER, nextAttemptAt } from '../../src/workers/retry.ts'

t.test('the retry schedule: the wait after attempt n, within ±20 %', async (t) => {
  const now = Date.UTC(2026, 0, 1)
  t.same(DEFAULT_RETRY_SCHEDULE, [10, 60, 300, 1_800, 7_200, 18_000, 36_000, 36_000], '9 attempts over about 28 hours')
  t.equal(JITTER, 0.2)
  DEFAULT_RETRY_SCHEDULE.forEach((seconds, i) => {
    const attempts = i + 1
    t.equal(nextAttemptAt(attempts, DEFAULT_RETRY_SCHEDULE, now, () => 0.5)!.getTime(), now + seconds * 1000, `after attempt ${attempts}: ${seconds} s without jitter`)
    t.equal(nextAttemptAt(attempts, DEFAULT_RETRY_SCHEDULE, now, () => 0)!.getTime(), now + Math.round(seconds * 800), 'at least 80 %')
    t.equal(nextAttemptAt(attempts, DEFAULT_RETRY_SCHEDULE, now, () => 1)!.getTime(), now + Math.round(seconds * 1200), 'at most 120 %')
  })
  t.equal(nextAttemptAt(DEFAULT_RETRY_SCHEDULE.length + 1, DEFAULT_RETRY_SCHEDULE, now), null, 'after the last entry: no more attempts')
  t.equal(nextAttemptAt(1, [], now), null, 'an empty schedule never retries')
})

t.test('a reaction is one emoji or a :shortcode:', async (t) => {
  for (const ok of ['👍', '❤️', '👩‍👩‍👧‍👦', '🇫🇷', '1️⃣', '#️⃣', '©️', ':ship-it:', ':+1:', ':a_b:']) t.ok(isReactionEmoji(ok), `${ok} is accepted`)
  for (const bad of ['', 'a', 'ok', '👍👍', '👍 ', '©', '™', '↔', ':Upper:', '::', `:${'a'.repeat(33)}:`, 'x'.repeat(MAX_EMOJI_LENGTH + 1)])
    t.notOk(isReactionEmoji(bad), `${JSON.stringify(bad)} is refused`)
})
