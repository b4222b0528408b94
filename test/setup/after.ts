// tap's `after` script: stop the PostgreSQL and Redis that test/setup/before.ts started for this
// run (nothing else), and remove their data.
import { existsSync, readFileSync } from 'node:fs'
import { readFile, rm } from 'node:fs/promises'
import { stopEmbeddedPostgres } from '../../src/db/embedded.ts'
import { servicesFile, type TestServices } from './services.ts'

/** Whether pid still runs the program we started (a pid of a finished run may be reused). */
function runs(pid: number, needle: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(needle)
  } catch {
    return !existsSync('/proc/self') // no /proc (macOS): trust the pid
  }
}

export async function stopStarted(state: Partial<TestServices>): Promise<void> {
  const { postgres, redis } = state.started ?? {}
  if (redis?.pid && runs(redis.pid, 'redis-server')) {
    try {
      process.kill(redis.pid, 'SIGKILL')
    } catch {
      // already gone
    }
  }
  if (postgres) {
    if (postgres.pid && runs(postgres.pid, postgres.dir)) await stopEmbeddedPostgres(postgres.pid)
    await rm(postgres.dir, { recursive: true, force: true })
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const file = servicesFile()
  const state = JSON.parse(await readFile(file, 'utf8').catch(() => '{}')) as Partial<TestServices>
  await stopStarted(state)
  await rm(file, { force: true })
}
