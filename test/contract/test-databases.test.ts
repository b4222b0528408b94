// The test kit's databases (test/setup/database.ts): a test takes the database of a test that has
// ended, emptied back to a fresh clone, instead of a new clone; a database that a test changed
// (a trigger, a function), that something is still connected to, or that grew, is not taken again.
import pg from 'pg'
import t from 'tap'
import { build, dropWhenDone } from '../helper.ts'
import { bootstrapBody } from '../identity/fixtures/support.ts'
import { createTestDatabase, emptyForReuse, endTestDatabase, takeTestDatabase, type TestDatabase } from '../setup/database.ts'

async function query<T extends pg.QueryResultRow>(url: string, sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query<T>(sql)).rows
  } finally {
    await client.end()
  }
}

/** Rows in each table but the migrations' record, as `table: count`, for the tables that have any. */
async function rowCounts(url: string): Promise<Record<string, number>> {
  const tables = await query<{ name: string }>(url, "SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' AND tablename <> '_prisma_migrations'")
  const counts: Record<string, number> = {}
  for (const { name } of tables) {
    const [row] = await query<{ n: number }>(url, `SELECT count(*)::int AS n FROM "${name}"`)
    if (row!.n > 0) counts[name] = row!.n
  }
  return counts
}

/** A new clone of this run's template, dropped at the end; and the fresh shape learnt. */
async function scratch(): Promise<TestDatabase> {
  const first = await takeTestDatabase()
  if (first.fresh) dropWhenDone(first.drop)
  endTestDatabase(first)
  const database = await createTestDatabase()
  dropWhenDone(database.drop)
  return database
}

const WRITE_ROWS = `
  INSERT INTO users (id, email, display_name) VALUES (gen_random_uuid(), 'kept@example.com', 'Kept');
  INSERT INTO channels (id, name, description) VALUES (gen_random_uuid(), 'kept', '');
  INSERT INTO agents (id, name, display_name) VALUES (gen_random_uuid(), 'kept-agent', 'Kept agent');
  SELECT nextval('outbox_events_id_seq'), nextval('outbox_events_id_seq');`

t.test('an ended test’s database is emptied: every row gone, the sequences restarted, the migrations kept', async (t) => {
  const database = await scratch()
  const [before] = await query<{ n: number }>(database.url, 'SELECT count(*)::int AS n FROM _prisma_migrations')
  await query(database.url, WRITE_ROWS)
  t.same(await rowCounts(database.url), { agents: 1, channels: 1, users: 1 }, 'rows written')
  t.equal(await emptyForReuse(database), true, 'taken again')
  t.same(await rowCounts(database.url), {}, 'no row left')
  t.same(await query(database.url, "SELECT nextval('outbox_events_id_seq')::int AS n"), [{ n: 1 }], 'the event sequence starts over')
  t.same(await query(database.url, 'SELECT count(*)::int AS n FROM _prisma_migrations'), [before], 'the migrations’ record is kept')
})

t.test('a database something is still connected to is not taken, nor emptied', async (t) => {
  const database = await scratch()
  await query(database.url, WRITE_ROWS)
  const holder = new pg.Client({ connectionString: database.url })
  await holder.connect()
  t.teardown(() => holder.end())
  t.equal(await emptyForReuse(database), false, 'not taken while connected')
  t.same(await rowCounts(database.url), { agents: 1, channels: 1, users: 1 }, 'its rows untouched')
})

t.test('a database whose schema a test changed is not taken, even after the test undid part of it', async (t) => {
  const database = await scratch()
  await query(
    database.url,
    `CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'no'; END $$;
     CREATE TRIGGER refuse_users BEFORE INSERT ON users FOR EACH ROW EXECUTE FUNCTION refuse();
     DROP TRIGGER refuse_users ON users;`,
  )
  t.equal(await emptyForReuse(database), false, 'a function left behind')
  const other = await scratch()
  await query(other.url, 'ALTER TABLE channels ADD COLUMN extra text')
  t.equal(await emptyForReuse(other), false, 'a column added')
})

t.test('a database that grew more than 8 MB past a fresh clone is not taken', async (t) => {
  const database = await scratch()
  await query(database.url, "INSERT INTO channels (id, name, description) SELECT gen_random_uuid(), 'c' || i, repeat(md5(i::text), 40) FROM generate_series(1, 12000) AS i")
  t.equal(await emptyForReuse(database), false)
})

t.test('the next test’s build gets the ended test’s database back, empty', async (t) => {
  let url = ''
  await t.test('a test writes a workspace', async (t) => {
    const { api, config } = await build(t)
    const res = await api({ method: 'POST', url: '/api/v1/bootstrap', payload: bootstrapBody() })
    t.equal(res.statusCode, 201)
    url = config.databaseUrl
  })
  await t.test('the next test', async (t) => {
    // Databases of earlier tests of this process may be waiting before it: take until it comes.
    const taken: (TestDatabase & { fresh: boolean })[] = []
    for (;;) {
      const database = await takeTestDatabase()
      if (database.fresh) dropWhenDone(database.drop)
      taken.push(database)
      if (database.url === url || database.fresh) break
    }
    const last = taken.at(-1)!
    for (const database of taken) endTestDatabase(database)
    t.equal(last.url, url, 'the same database, not a new clone')
    t.same(await rowCounts(last.url), {}, 'emptied')
    const { api } = await build(t)
    const res = await api({ method: 'POST', url: '/api/v1/bootstrap', payload: bootstrapBody() })
    t.equal(res.statusCode, 201, 'a workspace can be bootstrapped again on an emptied database')
  })
})
