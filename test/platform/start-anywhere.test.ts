// `npm start` anywhere: as root, from a checkout inside a mode-0700 folder (as under /root or in
// `mktemp -d`), the embedded PostgreSQL still starts (the postgres user cannot reach the
// checkout, so it runs from a copy and keeps its data in SHARED_ROOT); and a start-up failure
// ends with one line naming the cause and the fix, never a stack.
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { once } from 'node:events'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { SHARED_ROOT } from '../../src/db/embedded.ts'
import { freePort } from '../processes.ts'
import { dropWhenDone } from '../helper.ts'
import { createTestDatabase } from '../setup/database.ts'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const SKIP_ENTRIES = new Set(['.git', 'data', 'dist', '.tap', 'coverage'])

interface Run {
  output: () => string
  exited: Promise<number | null>
  kill: (signal: NodeJS.Signals) => void
}

function startServer(cwd: string, env: Record<string, string>): Run {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  proc.stdout.on('data', (d: Buffer) => (out += d.toString()))
  proc.stderr.on('data', (d: Buffer) => (out += d.toString()))
  const exited = once(proc, 'exit').then(([code]) => code as number | null)
  t.teardown(async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGKILL')
      await exited
    }
  })
  return { output: () => out, exited, kill: (signal) => proc.kill(signal) }
}

/**
 * The first /health answer with status `ok`, or, at the deadline, the last one. A probe gives each
 * dependency 1 s: on a saturated machine the embedded PostgreSQL, just started, once took longer,
 * and the first answer said `degraded` (seen in CI); a server that never becomes healthy still fails.
 */
async function waitForHealth(url: string, run: Run): Promise<Record<string, unknown>> {
  const deadline = Date.now() + 90_000
  let exited = false
  let last: Record<string, unknown> | null = null
  void run.exited.then(() => (exited = true))
  for (;;) {
    if (exited) throw new Error(`server exited early: ${run.output()}`)
    const body = await fetch(url).then(
      (r) => (r.ok ? (r.json() as Promise<Record<string, unknown>>) : null),
      () => null,
    )
    if (body?.status === 'ok') return body
    last = body ?? last
    if (Date.now() > deadline) {
      if (last) return last
      throw new Error(`server did not start: ${run.output()}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

const isRoot = typeof process.getuid === 'function' && process.getuid() === 0

t.test('as root, npm start serves from a checkout inside a 0700 folder', { skip: isRoot ? false : 'needs root (the case is root with a private home)' }, async (t) => {
  const privateDir = await mkdtemp(path.join(os.tmpdir(), 'ams-private-'))
  t.equal((await stat(privateDir)).mode & 0o777, 0o700, 'the parent folder is private')
  const checkout = path.join(privateDir, 'checkout')
  // A hard-linked copy of this checkout (same files, new private path), as a clone would be.
  const entries = (await readdir(ROOT)).filter((e) => !SKIP_ENTRIES.has(e))
  await mkdir(checkout)
  const cp = spawn('cp', ['-al', ...entries.map((e) => path.join(ROOT, e)), `${checkout}/`], { stdio: 'inherit' })
  t.equal((await once(cp, 'exit'))[0], 0, 'copied')
  const sharedData = path.join(
    SHARED_ROOT,
    `data-${createHash('sha256')
      .update(path.join(checkout, 'data', 'postgres'))
      .digest('hex')
      .slice(0, 12)}`,
  )
  t.teardown(() => rm(privateDir, { recursive: true, force: true }))
  t.teardown(() => rm(sharedData, { recursive: true, force: true }))

  const port = await freePort()
  const run = startServer(checkout, { PORT: String(port), LOG_LEVEL: 'info' })
  const health = await waitForHealth(`http://127.0.0.1:${port}/health`, run)
  t.same(health, { status: 'ok', database: 'connected', redis: 'disabled' })
  t.ok(existsSync(path.join(sharedData, 'postgres', 'PG_VERSION')), 'the data lives where the postgres user reaches it')
  t.match(await readFile(path.join(checkout, 'data', 'postgres-location.txt'), 'utf8'), sharedData, 'DATA_DIR says where')
  t.equal((await stat(privateDir)).mode & 0o777, 0o700, 'the private folder stays private')

  run.kill('SIGTERM')
  t.equal(await run.exited, 0, 'graceful stop')
  t.notMatch(run.output(), /failed to start|\n\s+at /, 'no failure, no stack')
})

t.test('a start-up failure is one line naming the cause and the fix', async (t) => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'ams-fail-'))
  t.teardown(() => rm(dataDir, { recursive: true, force: true }))
  const closed = await freePort()
  const run = startServer(ROOT, { PORT: String(await freePort()), DATA_DIR: dataDir, DATABASE_URL: `postgresql://postgres@127.0.0.1:${closed}/nothing` })
  t.equal(await run.exited, 1)
  const lines = run.output().trim().split('\n')
  t.equal(lines.length, 1, `one line: ${run.output()}`)
  t.equal(lines[0], `failed to start: cannot reach PostgreSQL at 127.0.0.1:${closed} (ECONNREFUSED); fix: start it or correct DATABASE_URL (unset DATABASE_URL to use the embedded PostgreSQL)`)
})

t.test('a port in use is named, with the fix', async (t) => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'ams-fail-'))
  t.teardown(() => rm(dataDir, { recursive: true, force: true }))
  const net = await import('node:net')
  const blocker = net.createServer().listen(0, '127.0.0.1')
  await once(blocker, 'listening')
  t.teardown(() => new Promise((resolve) => blocker.close(resolve)))
  const port = (blocker.address() as import('node:net').AddressInfo).port
  const db = await createTestDatabase()
  dropWhenDone(db.drop)
  const run = startServer(ROOT, { PORT: String(port), DATA_DIR: dataDir, DATABASE_URL: db.url, MIGRATE_ON_START: 'false' })
  t.equal(await run.exited, 1)
  const lines = run
    .output()
    .trim()
    .split('\n')
    .filter((l) => !l.startsWith('{'))
  t.same(lines, [`failed to start: port ${port} on 127.0.0.1 is already in use; fix: stop the other server or set PORT to a free port`])
})
