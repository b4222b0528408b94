// Applies prisma/migrations/*/migration.sql in order and records them in _prisma_migrations
// exactly as `prisma migrate deploy` does (same table, checksum = sha256 of the file, same
// advisory lock), so a database migrated here is also valid for the Prisma CLI and vice versa.
// The server runs this at start (MIGRATE_ON_START) and the tests use it for their template.
import { createHash, randomUUID } from 'node:crypto'
import { existsSync } from 'node:fs'
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'

const PRISMA_ADVISORY_LOCK = 72707369

/** prisma/migrations of the package, found from this file whether it runs as src/ or compiled in dist/. */
export const MIGRATIONS_DIR = findMigrationsDir(path.dirname(fileURLToPath(import.meta.url)))

function findMigrationsDir(start: string): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'prisma', 'migrations')
    if (existsSync(candidate)) return candidate
    if (path.dirname(dir) === dir) return path.resolve(start, '../../prisma/migrations')
  }
}

const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
  "id" VARCHAR(36) PRIMARY KEY NOT NULL,
  "checksum" VARCHAR(64) NOT NULL,
  "finished_at" TIMESTAMPTZ,
  "migration_name" VARCHAR(255) NOT NULL,
  "logs" TEXT,
  "rolled_back_at" TIMESTAMPTZ,
  "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "applied_steps_count" INTEGER NOT NULL DEFAULT 0
)`

interface AppliedRow {
  migration_name: string
  checksum: string
  finished_at: Date | null
  rolled_back_at: Date | null
}

export interface MigrationResult {
  applied: string[]
}

async function listMigrations(dir: string): Promise<{ name: string; sql: string; checksum: string }[]> {
  const entries = await readdir(dir, { withFileTypes: true })
  const names = entries
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort()
  return Promise.all(
    names.map(async (name) => {
      const sql = await readFile(path.join(dir, name, 'migration.sql'), 'utf8')
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') }
    }),
  )
}

export async function applyMigrations(databaseUrl: string, dir = MIGRATIONS_DIR): Promise<MigrationResult> {
  const migrations = await listMigrations(dir)
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  const applied: string[] = []
  try {
    await client.query('SELECT pg_advisory_lock($1)', [PRISMA_ADVISORY_LOCK])
    await client.query(CREATE_TABLE)
    const { rows } = await client.query<AppliedRow>('SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations" WHERE rolled_back_at IS NULL')
    const byName = new Map(rows.map((r) => [r.migration_name, r]))
    for (const migration of migrations) {
      const row = byName.get(migration.name)
      if (row?.finished_at) {
        if (row.checksum !== migration.checksum) {
          throw new Error(`migration ${migration.name} was changed after it was applied (checksum mismatch)`)
        }
        continue
      }
      if (row) throw new Error(`migration ${migration.name} failed earlier; resolve it (prisma migrate resolve) before starting`)
      await applyOne(client, migration)
      applied.push(migration.name)
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [PRISMA_ADVISORY_LOCK]).catch(() => {})
    await client.end()
  }
  return { applied }
}

async function applyOne(client: pg.Client, migration: { name: string; sql: string; checksum: string }): Promise<void> {
  const id = randomUUID()
  await client.query('INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at) VALUES ($1, $2, $3, now())', [id, migration.checksum, migration.name])
  try {
    // One script, one transaction: a failure leaves no half-applied migration behind.
    await client.query('BEGIN')
    await client.query(migration.sql)
    await client.query('COMMIT')
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {})
    const message = error instanceof Error ? error.message : String(error)
    await client.query('UPDATE "_prisma_migrations" SET logs = $2 WHERE id = $1', [id, message])
    throw new Error(`migration ${migration.name} failed: ${message}`, { cause: error })
  }
  await client.query('UPDATE "_prisma_migrations" SET finished_at = now(), applied_steps_count = 1 WHERE id = $1', [id])
}
