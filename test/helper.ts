// build(t): a fresh app on its own database (cloned from the migrated template) and, when asked,
// its own Redis key prefix; torn down with the test. `api` wraps app.inject and validates every
// response against the committed OpenAPI document (openapi/openapi.json), so the published
// contract cannot drift from what the server answers.
import { randomUUID } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import rootTap, { type Test } from 'tap'
import { Redis } from 'ioredis'
import { buildApp, type AppConfig, type BuildOptions } from '../src/app.ts'
import { loadConfig } from '../src/config.ts'
import { endTestDatabase, takeTestDatabase } from './setup/database.ts'
import { services } from './setup/services.ts'
import { captureExample, requestUrl } from './openapi-examples.ts'
import { assertMatchesOpenApi } from './openapi-validator.ts'
import type { Api } from './support/http.ts'

/** TEST_REDIS_URL, or the private redis-server the run started (test/setup/services.ts). */
export const TEST_REDIS_URL = services.redisUrl ?? process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'
export const TEST_JWT_SECRET = 'test-secret-that-is-long-enough-for-hs256-000'

export interface BuildTestOptions extends BuildOptions {
  /** Use Redis (a fresh key prefix per app) instead of single-node mode. */
  redis?: boolean
  /** Environment overrides, as an operator would set them. */
  env?: Record<string, string>
  /** Reuse an existing database (e.g. a second instance of the same workspace). */
  databaseUrl?: string
  /** Reuse a Redis key prefix (a second instance sharing the first one's streams). */
  redisPrefix?: string
  /**
   * Hash passwords at the server's real cost (12) instead of TEST_PASSWORD_COST: for the tests of
   * hashing itself and of the bcrypt queue under a flood.
   */
  realPasswordCost?: boolean
}

/**
 * bcrypt cost of the passwords test apps hash (bcrypt's lowest, 4): at the real cost each hash or
 * login cost a quarter of a second of CPU, a tenth of the suite's (docs/decisions.md, "The test
 * suite, round 3"). The tests that check the cost or fill the bcrypt queue use the real one.
 */
export const TEST_PASSWORD_COST = 4

export interface TestApp {
  app: FastifyInstance
  config: AppConfig
  /** app.inject + OpenAPI validation of the response. */
  api: Api
}

/** Removes the keys a test app left under its own prefix (streams, consumer groups, counters). */
async function deleteRedisKeys(prefix: string): Promise<void> {
  const redis = new Redis(TEST_REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 })
  try {
    await redis.connect()
    const keys: string[] = []
    for await (const batch of redis.scanStream({ match: `${prefix}*`, count: 1000 })) keys.push(...(batch as string[]))
    if (keys.length) await redis.del(...keys)
  } catch {
    // Redis is gone (a test stopped it): nothing to clean.
  } finally {
    redis.disconnect()
  }
}

const dropsAtEnd: (() => Promise<void>)[] = []
let dropsRegistered = false
/** How many databases are dropped at once at the end (each DROP holds a connection). */
const DROPS_AT_ONCE = 16

/**
 * Drops a test's database when the file (or group) ends, all of them together, instead of at the
 * test's end. Every DROP DATABASE makes PostgreSQL take a checkpoint, which writes and fsyncs the
 * dirty pages of the whole server, and waits for it; drops made together share checkpoints. One
 * drop per test, with four test processes writing beside it, was a third of the 450 checkpoints a
 * run took on a server with fsync on (docs/decisions.md, "The test suite, round 4").
 */
export function dropWhenDone(drop: () => Promise<void>): void {
  if (!dropsRegistered) {
    dropsRegistered = true
    rootTap.teardown(async () => {
      while (dropsAtEnd.length) {
        const batch = dropsAtEnd.splice(0, DROPS_AT_ONCE)
        await Promise.all(batch.map((d) => d().catch(() => {})))
      }
    })
  }
  dropsAtEnd.push(drop)
}

export async function testConfig(t: Test, options: BuildTestOptions = {}): Promise<AppConfig> {
  let databaseUrl = options.databaseUrl
  if (!databaseUrl) {
    const db = await takeTestDatabase()
    if (db.fresh) dropWhenDone(db.drop)
    // Teardowns run last-registered first: the apps built on it close before this.
    t.teardown(() => endTestDatabase(db))
    databaseUrl = db.url
  }
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'ams-test-'))
  t.teardown(() => rm(dataDir, { recursive: true, force: true }))
  let redisPrefix = options.redisPrefix
  if (options.redis && !redisPrefix) {
    redisPrefix = `ams:test:${randomUUID()}:`
    t.teardown(() => deleteRedisKeys(redisPrefix!))
  }
  const env: Record<string, string> = {
    LOG_LEVEL: 'silent',
    DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl,
    PORT: '0',
    PUBLIC_URL: 'http://localhost:3000',
    FRONTEND_URL: 'http://app.example.test',
    DATABASE_POOL_SIZE: '4',
    // The test machine's own load (many suites on two cores) lags every event loop for seconds;
    // that is not this app's load. Shedding is tested with explicit limits (test/platform).
    PRESSURE_MAX_EVENT_LOOP_DELAY_MS: '0',
    // A stop waits up to a quarter of this for kept-alive connections to close (src/plugins/shutdown.ts);
    // the test's own fetch keeps its idle ones open, so each app listening on a port took 2.5 s to close.
    // The stop itself is tested with its real bounds (test/platform).
    SHUTDOWN_TIMEOUT_MS: '1000',
    ...(options.redis ? { REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: redisPrefix! } : {}),
    ...options.env,
  }
  const config = loadConfig(env)
  return { ...config, databaseUrl, jwtSecret: TEST_JWT_SECRET, passwordCost: options.realPasswordCost ? config.passwordCost : TEST_PASSWORD_COST }
}

export async function build(t: Test, options: BuildTestOptions = {}): Promise<TestApp> {
  const config = await testConfig(t, options)
  const app = await buildApp(config, { background: options.background, logStream: options.logStream })
  t.teardown(() => app.close())
  await app.ready()
  const api = async (opts: InjectOptions): Promise<LightMyRequestResponse> => {
    const res = await app.inject(opts)
    assertMatchesOpenApi(String(opts.method ?? 'GET'), requestUrl(opts), res)
    captureExample(opts, res)
    return res
  }
  return { app, config, api }
}
