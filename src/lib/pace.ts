// Pacing under load, shared by the event stream's read loop (src/realtime/redis-broker.ts) and the
// group commit (src/lib/batcher.ts): the next round trip waits for the rest of an interval, so
// that it carries more.

/**
 * The rest of `intervalMs` since `last` (both `performance.now()` times); none once it has passed,
 * and none below a millisecond (a timer costs more than the round trip it would save).
 */
export function restOfInterval(last: number, now: number, intervalMs: number): number {
  if (intervalMs <= 0) return 0
  const wait = last + intervalMs - now
  return wait >= 1 ? wait : 0
}
