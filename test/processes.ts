// Real server processes for tests that need them (several instances, a kill in the middle,
// shutdown): src/server.ts on a test's database and Redis prefix, run from one file that esbuild
// (the compiler tsx itself uses) bundles from the sources once per test process. Started through
// tsx's loader instead, each process cost 6 s of CPU before it answered, 2.5 s of it resolving and
// loading modules through the loader's thread; from the bundle it costs 3 s (docs/decisions.md,
// "The test suite, round 8"). `npm start` itself, with tsx, is what test/platform/start-anywhere
// starts.
import { spawn, type ChildProcess } from 'node:child_process'
import { createHash } from 'node:crypto'
import { once } from 'node:events'
import { existsSync } from 'node:fs'
import { mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises'
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

let bundled: Promise<string> | undefined

/**
 * src/server.ts and every source it imports as one ES module (packages stay imports), built on the
 * first call of the process and named by its content. It lies two folders below the checkout, as a
 * source file does, so that what the server finds next to its code (dist/web, prisma/migrations)
 * is where it looks. Processes building at once write the same file; each renames its own copy.
 */
export function serverBundle(): Promise<string> {
  bundled ??= (async () => {
    const { build } = await import('esbuild')
    const { outputFiles } = await build({
      entryPoints: [path.join(ROOT, 'src', 'server.ts')],
      absWorkingDir: ROOT,
      bundle: true,
      packages: 'external',
      format: 'esm',
      platform: 'node',
      target: 'node20',
      sourcemap: 'inline',
      write: false,
      logLevel: 'silent',
    })
    const code = outputFiles[0]!.contents
    const dir = path.join(ROOT, 'dist', 'test-server')
    const file = path.join(dir, `server-${createHash('sha256').update(code).digest('hex').slice(0, 16)}.mjs`)
    if (!existsSync(file)) {
      await mkdir(dir, { recursive: true })
      await writeFile(`${file}.${process.pid}`, code)
      await rename(`${file}.${process.pid}`, file)
      // Bundles of older sources go after a day (a run still using one would have started it long before).
      for (const name of await readdir(dir)) {
        const other = path.join(dir, name)
        if (other !== file && Date.now() - (await stat(other)).mtimeMs > 86_400_000) await rm(other, { force: true })
      }
    }
    return file
  })()
  return bundled
}

/** Starts the server (its sources bundled: serverBundle) with `npm start`'s flags, and waits until /health answers. */
export async function startServer(t: Test, env: Record<string, string>): Promise<ServerProcess> {
  const port = Number(env.PORT)
  const entry = await serverBundle()
  const proc = spawn(process.execPath, ['--min-semi-space-size=64', '--max-semi-space-size=64', '--enable-source-maps', entry], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
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
