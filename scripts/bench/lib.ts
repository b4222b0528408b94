// What every benchmark needs: a scratch database next to BENCH_DATABASE_URL, a free loopback
// port, percentiles and a one-line description of the machine the figures came from.
import { readdirSync, readFileSync } from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import { performance } from 'node:perf_hooks'
import pg from 'pg'

export const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres'

/** Runs one statement on the admin database (CREATE / DROP DATABASE). */
export async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: ADMIN_URL })
  await client.connect()
  try {
    await client.query(sql)
  } finally {
    await client.end()
  }
}

/** The URL of database `name` on the admin server. */
export function databaseUrl(name: string): string {
  const url = new URL(ADMIN_URL)
  url.pathname = `/${name}`
  return url.toString()
}

/** The p-th percentile of an ascending array (NaN when empty). */
export function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return NaN
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}

export async function freePort(): Promise<number> {
  const server = net.createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as net.AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}

export function machine(): string {
  const cpus = os.cpus()
  return `${cpus.length} × ${cpus[0]?.model.trim() ?? 'cpu'}, ${Math.round(os.totalmem() / 1024 ** 3)} GB RAM, Node ${process.version}`
}

/** The node flags `npm start` runs the server with (package.json), so benchmarks run the same. */
export function startFlags(root: string): string[] {
  const { scripts } = JSON.parse(readFileSync(`${root}/package.json`, 'utf8')) as { scripts: { start: string } }
  const words = scripts.start.split(/\s+/)
  return words.slice(words.indexOf('node') + 1, words.indexOf('src/server.ts'))
}

/**
 * The numeric fields of /proc/<pid>/stat after the command name (index 1: ppid; 11-14: utime,
 * stime, cutime, cstime in USER_HZ, 100/s); null once the process is gone.
 */
function procStat(pid: number): number[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat
      .slice(stat.lastIndexOf(')') + 2)
      .split(' ')
      .map(Number)
  } catch {
    return null
  }
}

/**
 * CPU seconds (user + system) a process has used; with `children`, also those of its children that
 * have exited (PostgreSQL's backends come and go with the pool). 0 once the process is gone.
 */
function cpuSeconds(pid: number, children = false): number {
  const f = procStat(pid)
  if (!f) return 0
  return (f[11]! + f[12]! + (children ? f[13]! + f[14]! : 0)) / 100
}

/** CPU seconds (user + system) the given live processes have used so far. */
export function cpuSecondsOf(pids: number[]): number {
  return pids.reduce((total, pid) => total + cpuSeconds(pid), 0)
}

/** Pids of every process with this command name (PostgreSQL's backends, redis-server). */
function pidsNamed(name: string): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        return readFileSync(`/proc/${d}/comm`, 'utf8').trim() === name
      } catch {
        return false
      }
    })
    .map(Number)
}

/** All the CPU PostgreSQL has used: its live processes plus the backends that have exited. */
function postgresCpuSeconds(): number {
  const pids = pidsNamed('postgres')
  const set = new Set(pids)
  // The postmaster (whose parent is not a postgres process) also counts its exited children. A
  // backend that exits meanwhile counts 0 here and in its parent's children from then on.
  return pids.reduce((total, pid) => total + cpuSeconds(pid, !set.has(procStat(pid)?.[1] ?? 0)), 0)
}

/** CPU used by the server processes, PostgreSQL and Redis from now on, in % of one core. */
export function cpuMeter(serverPids: number[]): () => { server: number; postgres: number; redis: number } {
  const sum = (pids: number[]): number => pids.reduce((total, pid) => total + cpuSeconds(pid), 0)
  const read = (): { server: number; postgres: number; redis: number } => ({
    server: sum(serverPids),
    postgres: postgresCpuSeconds(),
    redis: sum(pidsNamed('redis-server')),
  })
  const before = read()
  const t0 = performance.now()
  return () => {
    const seconds = (performance.now() - t0) / 1000
    const after = read()
    const pct = (key: keyof typeof after): number => Math.round(((after[key] - before[key]) / seconds) * 100)
    return { server: pct('server'), postgres: pct('postgres'), redis: pct('redis') }
  }
}

/** BENCH_SERVER_ENV ("NAME=value NAME=value"): settings of the server under test, to compare configurations. */
export const SERVER_ENV: Record<string, string> = Object.fromEntries(
  (process.env.BENCH_SERVER_ENV ?? '')
    .split(/\s+/)
    .filter(Boolean)
    .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
)
