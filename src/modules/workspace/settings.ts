// The loop guard's workspace settings as the posting path reads them: cached for a few seconds
// per server, so a post costs no extra query. A change through PATCH /api/v1/workspace applies at
// once on the server that took it and within SETTINGS_TTL_MS on the others (as the rate limit).
import type { FastifyInstance } from 'fastify'
import { readLoopGuardSettings } from './repo.ts'

/** How long a server keeps the workspace's settings it read (the loop guard's here, the rate limit's in src/plugins/rate-limit.ts). */
export const SETTINGS_TTL_MS = 5_000

export interface LoopGuardSettings {
  /** Loop protection on (the turn limit and the chain cap) or off. */
  enabled: boolean
  /** Turns allowed in one conversation within the window with no human message. */
  maxTurns: number
  windowSeconds: number
  /** Longest agent chain (0 = no cap). */
  maxDepth: number
}

/** Before bootstrap there is no instance row; these are its columns' defaults. */
export const LOOP_GUARD_DEFAULTS: LoopGuardSettings = { enabled: true, maxTurns: 20, windowSeconds: 60, maxDepth: 20 }

interface Cache {
  value?: LoopGuardSettings
  until: number
  loading?: Promise<LoopGuardSettings>
}

// Keyed by the app's database handle, which every encapsulated plugin context shares.
const caches = new WeakMap<object, Cache>()

function cacheOf(app: FastifyInstance): Cache {
  let cache = caches.get(app.db)
  if (!cache) caches.set(app.db, (cache = { until: 0 }))
  return cache
}

export async function loopGuardSettings(app: FastifyInstance): Promise<LoopGuardSettings> {
  const cache = cacheOf(app)
  if (cache.value && cache.until > Date.now()) return cache.value
  cache.loading ??= readLoopGuardSettings(app.db.prisma)
    .then((row) => {
      const value = row ? { enabled: row.loopGuardEnabled, maxTurns: row.loopGuardMaxTurns, windowSeconds: row.loopGuardWindowSeconds, maxDepth: row.loopGuardMaxDepth } : LOOP_GUARD_DEFAULTS
      cache.value = value
      cache.until = Date.now() + SETTINGS_TTL_MS
      return value
    })
    .finally(() => {
      cache.loading = undefined
    })
  return cache.loading
}

/** Forget this server's copy (after PATCH /api/v1/workspace). */
export function forgetLoopGuardSettings(app: FastifyInstance): void {
  const cache = cacheOf(app)
  cache.value = undefined
  cache.until = 0
}
