// Retry schedule of deliveries (docs/webhooks.md). The first attempt is immediate; after a
// failed attempt n the next one waits schedule[n-1] seconds, ±20 % jitter so that many
// deliveries failing together do not retry in lockstep. After the last entry the delivery fails.

/** 10 s, 1 min, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h: 9 attempts over about 28 hours. */
export const DEFAULT_RETRY_SCHEDULE = [10, 60, 300, 1_800, 7_200, 18_000, 36_000, 36_000]

export const JITTER = 0.2

/**
 * When to make the next attempt after `attemptsMade` failed attempts, or null when the schedule
 * is exhausted (the delivery becomes failed).
 */
export function nextAttemptAt(attemptsMade: number, schedule: number[], now = Date.now(), random = Math.random): Date | null {
  const base = schedule[attemptsMade - 1]
  if (base === undefined) return null
  const factor = 1 - JITTER + 2 * JITTER * random()
  return new Date(now + Math.round(base * 1000 * factor))
}
