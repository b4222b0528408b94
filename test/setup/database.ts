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

/** Runs `fn` on a connection of its own to `url`, closed afterwards. */
async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url })
  try {
    await client.connect()
    return await fn(client)
  } finally {
    await client.end().catch(() => {})
  }
}

const withAdmin = <T>(fn: (client: pg.Client) => Promise<T>): Promise<T> => withClient(TEST_DATABASE_URL, fn)

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

export interface TestDatabase {
  url: string
  drop: () => Promise<void>
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const template = await ensureTemplate()
  const name = `ams_test_${process.pid}_${Date.now().toString(36)}_${counter++}`
  await withAdmin(async (admin) => admin.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"${await cloneStrategy(admin)}`))
  return {
    url: databaseUrl(name),
    drop: () => withAdmin((admin) => admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)).then(() => undefined),
  }
}

/**
 * Databases whose test has ended, in this process: the next test takes one of them, emptied,
 * instead of a new clone (`takeTestDatabase`). A clone through the WAL cost PostgreSQL about 84 ms
 * of CPU and the test 170 ms of waiting, its drop 20-30 ms more, and every connection to a new
 * database builds its catalog caches anew; emptying one costs about 10 ms (docs/decisions.md, "The
 * test suite, round 7").
 */
const ended: TestDatabase[] = []

/** AMS_TEST_FRESH_DATABASES=1: a new clone for every test, as before (to rule the reuse out). */
const FRESH_ONLY = process.env.AMS_TEST_FRESH_DATABASES === '1'

/** What a fresh clone looks like: its tables, functions, triggers and settings (see `SHAPE_SQL`). */
let freshShape: string | null = null
let freshSize = 0
/** The statements that empty a database of this migration set back to a fresh clone. */
let emptying: string | null = null

/**
 * One value that changes when a test changed the database's schema rather than its rows (a
 * trigger it created, a function, a column, a setting of the database): such a database is not
 * taken again. Also how many others are connected to it, and its size.
 */
const SHAPE_SQL = `SELECT
  (SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid())::int AS others,
  pg_database_size(current_database())::float8 AS size,
  (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) AS superuser,
  md5(concat_ws('|',
    (SELECT string_agg(c.relname || ':' || c.relkind::text || ':' || c.relnatts || ':' || c.relhastriggers, ',' ORDER BY c.relname)
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')),
    (SELECT string_agg(p.proname || ':' || md5(p.prosrc), ',' ORDER BY p.proname, p.prosrc)
       FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname NOT IN ('pg_catalog', 'information_schema')),
    (SELECT string_agg(tgname, ',' ORDER BY tgname) FROM pg_trigger),
    (SELECT string_agg(conname, ',' ORDER BY conname) FROM pg_constraint),
    (SELECT string_agg(nspname, ',' ORDER BY nspname) FROM pg_namespace),
    (SELECT count(*) FROM pg_db_role_setting s JOIN pg_database d ON d.oid = s.setdatabase WHERE d.datname = current_database())
  )) AS shape`

/** A database grown this far past a fresh clone (rows deleted leave their pages) is not taken again. */
const GROWN_BYTES = 8 * 1024 * 1024

interface Shape {
  others: number
  size: number
  superuser: boolean
  shape: string
}

/**
 * The statements that empty every table but the migrations' record, and restart the sequences.
 * As a superuser, `DELETE`s with the foreign keys' triggers off (session_replication_role), about
 * 10 ms; otherwise one `TRUNCATE` of them all, about four times that.
 */
async function emptyingSql(client: pg.Client, superuser: boolean): Promise<string> {
  const tables = (await client.query<{ name: string }>("SELECT quote_ident(tablename) AS name FROM pg_tables WHERE schemaname = 'public' AND tablename <> '_prisma_migrations' ORDER BY 1")).rows.map(
    (r) => r.name,
  )
  const sequences = (await client.query<{ name: string }>("SELECT quote_ident(sequencename) AS name FROM pg_sequences WHERE schemaname = 'public' ORDER BY 1")).rows.map((r) => r.name)
  const restart = sequences.map((s) => `ALTER SEQUENCE ${s} RESTART;`).join(' ')
  if (!superuser) return `BEGIN; TRUNCATE ${tables.join(', ')} RESTART IDENTITY; ${restart} COMMIT;`
  return `BEGIN; SET LOCAL session_replication_role = replica; ${tables.map((table) => `DELETE FROM ${table};`).join(' ')} ${restart} COMMIT;`
}

/**
 * Empties a database a finished test used, when it can stand for a fresh clone: nothing is
 * connected to it any more (an app the test left open would still be), its schema is as the
 * migrations left it, and it has not grown much. False: it stays as it is, dropped with the others
 * at the end.
 */
export function emptyForReuse(database: TestDatabase): Promise<boolean> {
  return withClient(database.url, async (client) => {
    const found = (await client.query<Shape>(SHAPE_SQL)).rows[0]!
    if (found.others > 0 || found.shape !== freshShape || found.size > freshSize + GROWN_BYTES) return false
    emptying ??= await emptyingSql(client, found.superuser)
    await client.query(emptying)
    return true
  }).catch(() => false)
}

/** Reads what a fresh clone looks like, once per process, from the first clone before any test uses it. */
function learnFreshShape(database: TestDatabase): Promise<void> {
  return withClient(database.url, async (client) => {
    const found = (await client.query<Shape>(SHAPE_SQL)).rows[0]!
    freshShape = found.shape
    freshSize = found.size
  })
}

/**
 * A database for one test: an emptied one of an ended test of this process where there is one
 * (`endTestDatabase`), else a new clone. `drop` of a new clone must still be registered by the
 * caller; `fresh` says whether it is one.
 */
export async function takeTestDatabase(): Promise<TestDatabase & { fresh: boolean }> {
  while (ended.length && !FRESH_ONLY) {
    const database = ended.shift()!
    if (freshShape && (await emptyForReuse(database))) return { ...database, fresh: false }
  }
  const database = await createTestDatabase()
  if (!freshShape && !FRESH_ONLY) await learnFreshShape(database).catch(() => {})
  return { ...database, fresh: true }
}

/** The test that took `database` has ended: a later test of this process may take it again. */
export function endTestDatabase(database: TestDatabase): void {
  ended.push(database)
}
