// Real server processes for tests that need them (several instances, a kill in the middle,
// shutdown): `node --import tsx src/server.ts` on a test's database and Redis prefix.
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import net from 'node:net'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Test } from 'tap'
import type { AppConfig } from '../src/app.ts'
import { TEST_JWT_SECRET } from './helper.ts'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

export async function freePort(): Promise<number> {
  const server = net.createServer()
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as net.AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}

export interface RedisProcess {
  proc: ChildProcess
  exited: Promise<unknown>
}

/** A private redis-server on `port` (nothing kept on disk), killed with the test if still running. */
export function startRedis(t: Test, port: number): RedisProcess {
  const proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'], { stdio: 'ignore' })
  const exited = new Promise((resolve) => proc.once('exit', resolve))
  t.teardown(async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGKILL') // also ends a stopped (SIGSTOP) one
      await exited
    }
  })
  return { proc, exited }
}

/** Environment for a real server process from a test config. */
export function serverEnv(config: AppConfig, port: number, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    HOST: '127.0.0.1',
    PORT: String(port),
    LOG_LEVEL: 'warn',
    DATA_DIR: config.dataDir,
    DATABASE_URL: config.databaseUrl,
    DATABASE_POOL_SIZE: '4',
    MIGRATE_ON_START: 'false',
    JWT_SECRET: TEST_JWT_SECRET,
    PUBLIC_URL: config.publicUrl,
    FRONTEND_URL: config.frontendUrl,
    // As in test/helper.ts: the loaded test machine's lag is not the server's load.
    PRESSURE_MAX_EVENT_LOOP_DELAY_MS: String(config.pressureMaxEventLoopDelayMs),
    ...(config.redisUrl ? { REDIS_URL: config.redisUrl, REDIS_PREFIX: config.redisPrefix } : {}),
    ...extra,
  }
}

export interface ServerProcess {
  proc: ChildProcess
  port: number
  http: string
  ws: string
  output: () => string
  /** Resolves with the exit code. */
  exited: Promise<number | null>
}

/** Starts the server as `npm start` does (`node --import tsx src/server.ts`, same flags) and waits until /health answers. */
export async function startServer(t: Test, env: Record<string, string>): Promise<ServerProcess> {
  const port = Number(env.PORT)
  const proc = spawn(process.execPath, ['--min-semi-space-size=64', '--max-semi-space-size=64', '--import', 'tsx', 'src/server.ts'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  proc.stdout.on('data', (d: Buffer) => (out += d.toString()))
  proc.stderr.on('data', (d: Buffer) => (out += d.toString()))
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)))
  t.teardown(async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGKILL')
      await exited
    }
  })
  const http = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 60_000
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`server exited early (${proc.exitCode}): ${out}`)
    const ok = await fetch(`${http}/health`).then(
      (r) => r.ok,
      () => false,
    )
    if (ok) break
    if (Date.now() > deadline) throw new Error(`server did not start: ${out}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return { proc, port, http, ws: `ws://127.0.0.1:${port}`, output: () => out, exited }
}
