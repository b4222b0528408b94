// tap's `before` script: make sure the run has a PostgreSQL and (if it can) a Redis, then build
// the migrated template once before the test files start. What it starts is stopped by
// test/setup/after.ts (see test/setup/services.ts).
import { spawn } from 'node:child_process'
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'
import { startEmbeddedPostgres } from '../../src/db/embedded.ts'
import { describeStartupFailure, StartupError } from '../../src/lib/startup-error.ts'
import { stopStarted } from './after.ts'
import { CONFIGURED_DATABASE_URL, CONFIGURED_REDIS_URL, hasRedisServer, INSTALL_REDIS, REQUIRE_ALL, services, servicesFile, type TestServices } from './services.ts'

const say = (msg: string): void => console.log(`# ${msg}`)

async function postgresError(url: string): Promise<string | null> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000 })
  try {
    await client.connect()
    await client.query('SELECT 1')
    return null
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? (error as Error).message
  } finally {
    await client.end().catch(() => {})
  }
}

/** PING over a raw socket (no client library, no retries): the reply, or the failure. */
function redisError(url: string): Promise<string | null> {
  const { hostname, port } = new URL(url)
  return new Promise((resolve) => {
    const socket = net.connect(Number(port || 6379), hostname || '127.0.0.1')
    const finish = (result: string | null): void => {
      socket.destroy()
      resolve(result)
    }
    socket.setTimeout(2_000, () => finish('ETIMEDOUT'))
    socket.once('error', (error: NodeJS.ErrnoException) => finish(error.code ?? error.message))
    socket.once('connect', () => socket.write('PING\r\n'))
    socket.once('data', (d) => finish(/^\+PONG|^-NOAUTH/.test(d.toString()) ? null : d.toString().trim()))
  })
}

async function freePort(): Promise<number> {
  const server = net.createServer().listen(0, '127.0.0.1')
  await new Promise((resolve) => server.once('listening', resolve))
  const { port } = server.address() as net.AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}

async function startRedisServer(): Promise<{ url: string; pid: number }> {
  const port = await freePort()
  const proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'], { stdio: 'ignore', detached: true })
  proc.unref()
  const url = `redis://127.0.0.1:${port}`
  for (let i = 0; i < 100; i++) {
    if (proc.exitCode !== null) break
    if ((await redisError(url)) === null) return { url, pid: proc.pid! }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  proc.kill('SIGKILL')
  throw new Error(`redis-server did not start on port ${port}`)
}

/** Services recorded by runners that are gone (killed before their `after`): stop them. */
async function reapAbandoned(): Promise<void> {
  for (const name of await readdir(os.tmpdir()).catch(() => [] as string[])) {
    const match = /^ams-test-services-(\d+)\.json$/.exec(name)
    if (!match) continue
    const pid = Number(match[1])
    try {
      process.kill(pid, 0)
      continue // that run is still going
    } catch {
      // gone
    }
    const file = path.join(os.tmpdir(), name)
    const state = JSON.parse(await readFile(file, 'utf8').catch(() => '{}')) as Partial<TestServices>
    await stopStarted(state).catch(() => {})
    await rm(file, { force: true })
  }
}

const state: TestServices = { databaseUrl: CONFIGURED_DATABASE_URL, redisUrl: CONFIGURED_REDIS_URL, redisServer: hasRedisServer(), started: {} }
// Recorded before anything starts, so the next run can stop it even if this process is killed.
const save = (): Promise<void> => writeFile(servicesFile(), JSON.stringify(state))

async function main(): Promise<void> {
  await reapAbandoned()

  const pgError = await postgresError(CONFIGURED_DATABASE_URL)
  if (pgError) {
    say(`TEST_DATABASE_URL (${new URL(CONFIGURED_DATABASE_URL).host}) is not reachable (${pgError}): starting an embedded PostgreSQL for this run`)
    const dir = await mkdtemp(path.join(os.tmpdir(), 'ams-test-pg-'))
    state.started.postgres = { pid: 0, dir }
    await save()
    const embedded = await startEmbeddedPostgres(dir, () => {}, {
      database: 'postgres',
      port: 0,
      detached: true,
      // Throwaway data: durability off makes every CREATE DATABASE and commit cheaper.
      settings: { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off', max_connections: '300' },
    })
    state.started.postgres = { pid: embedded.pid, dir }
    state.databaseUrl = embedded.url
    await save()
    say(`embedded PostgreSQL on ${new URL(embedded.url).host}`)
  }

  const rError = await redisError(CONFIGURED_REDIS_URL)
  if (rError) {
    if (state.redisServer) {
      const redis = await startRedisServer()
      state.started.redis = { pid: redis.pid }
      state.redisUrl = redis.url
      say(`TEST_REDIS_URL (${new URL(CONFIGURED_REDIS_URL).host}) is not reachable (${rError}): started a private redis-server on ${new URL(redis.url).host}`)
    } else {
      state.redisUrl = null
      say(`TEST_REDIS_URL (${new URL(CONFIGURED_REDIS_URL).host}) is not reachable (${rError}) and there is no redis-server on PATH: the tests that need Redis are skipped; ${INSTALL_REDIS}`)
    }
  }
  if (!state.redisServer) say(`no redis-server on PATH: the tests that start their own Redis are skipped; ${INSTALL_REDIS}`)
  await save()
  if (REQUIRE_ALL && (!state.redisUrl || !state.redisServer)) {
    throw new StartupError('AMS_TEST_REQUIRE_ALL is set and the Redis tests would be skipped', INSTALL_REDIS)
  }

  Object.assign(services, state) // this process's own view (database.ts reads it)
  const { ensureTemplate } = await import('./database.ts')
  const name = await ensureTemplate()
  say(`test template database: ${name}`)
}

try {
  await main()
} catch (error) {
  console.error(`test setup failed: ${describeStartupFailure(error)}`)
  // A failed `before` ends the run without `after`: stop what was started here.
  await stopStarted(state).catch(() => {})
  await rm(servicesFile(), { force: true })
  process.exitCode = 1
}
