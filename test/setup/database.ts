// Test databases: one template per migration set (named by a hash of prisma/migrations), migrated
// once with the server's own applier; every build(t) clones it with CREATE DATABASE … TEMPLATE,
// so test files run in parallel on isolated data.
import { createHash } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import pg from 'pg'
import { applyMigrations, MIGRATIONS_DIR } from '../../src/db/migrate.ts'
import { services } from './services.ts'

/** TEST_DATABASE_URL, or the embedded PostgreSQL the run started instead (test/setup/services.ts). */
export const TEST_DATABASE_URL = services.databaseUrl

export function databaseUrl(name: string): string {
  const url = new URL(TEST_DATABASE_URL)
  url.pathname = `/${name}`
  return url.toString()
}

export function templateName(): string {
  const hash = createHash('sha256')
  for (const dir of readdirSync(MIGRATIONS_DIR, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort()) {
    hash.update(dir).update(readFileSync(path.join(MIGRATIONS_DIR, dir, 'migration.sql')))
  }
  return `ams_template_${hash.digest('hex').slice(0, 12)}`
}

async function withAdmin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL })
  await client.connect()
  try {
    return await fn(client)
  } finally {
    await client.end()
  }
}

/** Creates and migrates the template unless it exists (safe to call from parallel processes). */
export async function ensureTemplate(): Promise<string> {
  const name = templateName()
  await withAdmin(async (admin) => {
    await admin.query('SELECT pg_advisory_lock(4242001)')
    try {
      const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])
      if (rowCount) return
      await admin.query(`CREATE DATABASE "${name}_building"`).catch(async () => {
        await admin.query(`DROP DATABASE IF EXISTS "${name}_building" WITH (FORCE)`)
        await admin.query(`CREATE DATABASE "${name}_building"`)
      })
      await applyMigrations(databaseUrl(`${name}_building`))
      await admin.query(`ALTER DATABASE "${name}_building" RENAME TO "${name}"`)
      // Templates of other migration sets are left alone: another checkout (a branch with other
      // migrations) may be cloning them right now on the same PostgreSQL.
    } finally {
      await admin.query('SELECT pg_advisory_unlock(4242001)')
    }
  })
  return name
}

let counter = 0
let strategy: Promise<string> | null = null

/**
 * How a clone is made. PostgreSQL 15 and later copy through the WAL by default; `STRATEGY
 * FILE_COPY` copies the files instead, at half the CPU (84 against 39 ms a clone of the 9 MB
 * template, measured), but it forces two checkpoints per clone (before and after the copy), and a
 * checkpoint writes and fsyncs every dirty page of the whole server. With `fsync` off (the
 * embedded PostgreSQL a run starts for itself) they cost nothing, so the files are copied. On a
 * server that syncs (the machine's own PostgreSQL, as on CI) four test processes cloning at once
 * made about 450 checkpoints a run and spent nearly 4 minutes in their fsyncs (2026-11-27,
 * `pg_stat_bgwriter`), so the clone goes through the WAL there. Before 15, copying the files is
 * the only way and the clause does not exist.
 */
function cloneStrategy(admin: pg.Client): Promise<string> {
  strategy ??= admin.query<{ version: string; fsync: string }>("SELECT current_setting('server_version_num') AS version, current_setting('fsync') AS fsync").then(({ rows }) => {
    if (Number(rows[0]!.version) < 150_000) return ''
    return rows[0]!.fsync === 'off' ? ' STRATEGY FILE_COPY' : ' STRATEGY WAL_LOG'
  })
  return strategy
}

export async function createTestDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const template = await ensureTemplate()
  const name = `ams_test_${process.pid}_${Date.now().toString(36)}_${counter++}`
  await withAdmin(async (admin) => admin.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"${await cloneStrategy(admin)}`))
  return {
    url: databaseUrl(name),
    drop: () => withAdmin((admin) => admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)).then(() => undefined),
  }
}
