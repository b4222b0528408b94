// The workspace settings every request path reads (the rate limit on every request, the loop
// guard on every agent post): one read of the instance row, cached for a few seconds per server,
// so a request costs no extra query. A change through PATCH /api/v1/workspace applies at once on
// the server that took it and within SETTINGS_TTL_MS on the others.
import type { ServiceContext } from '../context.ts'
import { readWorkspaceSettings } from './repo.ts'

/** How long a server keeps the workspace's settings it read. */
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

interface WorkspaceSettings {
  loopGuard: LoopGuardSettings
  /** Requests per minute for the workspace; null: the configured RATE_LIMIT_PER_MINUTE. */
  rateLimitPerMinute: number | null
}

interface Cache {
  value?: WorkspaceSettings
  until: number
  loading?: Promise<WorkspaceSettings>
}

// Keyed by the app's database handle (ctx.db), which lives as long as the app.
const caches = new WeakMap<object, Cache>()

function cacheOf(ctx: ServiceContext): Cache {
  let cache = caches.get(ctx.db)
  if (!cache) caches.set(ctx.db, (cache = { until: 0 }))
  return cache
}

async function workspaceSettings(ctx: ServiceContext): Promise<WorkspaceSettings> {
  const cache = cacheOf(ctx)
  if (cache.value && cache.until > Date.now()) return cache.value
  cache.loading ??= readWorkspaceSettings(ctx.db.prisma)
    .then((row) => {
      const value: WorkspaceSettings = row
        ? {
            loopGuard: { enabled: row.loopGuardEnabled, maxTurns: row.loopGuardMaxTurns, windowSeconds: row.loopGuardWindowSeconds, maxDepth: row.loopGuardMaxDepth },
            rateLimitPerMinute: row.rateLimitPerMinute,
          }
        : { loopGuard: LOOP_GUARD_DEFAULTS, rateLimitPerMinute: null }
      cache.value = value
      cache.until = Date.now() + SETTINGS_TTL_MS
      return value
    })
    .finally(() => {
      cache.loading = undefined
    })
  return cache.loading
}

export async function loopGuardSettings(ctx: ServiceContext): Promise<LoopGuardSettings> {
  return (await workspaceSettings(ctx)).loopGuard
}

/**
 * The rate limit in force (requests per minute, 0 = none). Database trouble must not turn into
 * 429s or 500s on every request: it falls back to the last value read, or the configured one.
 */
export async function rateLimitPerMinute(ctx: ServiceContext): Promise<number> {
  try {
    return (await workspaceSettings(ctx)).rateLimitPerMinute ?? ctx.config.rateLimitPerMinute
  } catch (error) {
    ctx.log.warn({ err: error }, 'could not read the workspace rate limit; using the configured default')
    return cacheOf(ctx).value?.rateLimitPerMinute ?? ctx.config.rateLimitPerMinute
  }
}

/** The rate limit in force if this server's copy is fresh, without waiting; undefined otherwise. */
export function cachedRateLimitPerMinute(ctx: ServiceContext): number | undefined {
  const cache = cacheOf(ctx)
  if (!cache.value || cache.until <= Date.now()) return undefined
  return cache.value.rateLimitPerMinute ?? ctx.config.rateLimitPerMinute
}

/** Forget this server's copy (after PATCH /api/v1/workspace). */
export function forgetWorkspaceSettings(ctx: ServiceContext): void {
  const cache = cacheOf(ctx)
  cache.value = undefined
  cache.until = 0
}
