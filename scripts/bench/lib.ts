// What every benchmark needs: a scratch database next to BENCH_DATABASE_URL, a free loopback
// port, percentiles and a one-line description of the machine the figures came from.
import { readFileSync } from 'node:fs'
import net from 'node:net'
import os from 'node:os'
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
