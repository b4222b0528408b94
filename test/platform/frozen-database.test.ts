// PostgreSQL frozen: every process of a cluster this test starts for itself (embedded PostgreSQL,
// as src/db/embedded.ts runs it; never the machine's shared server) is stopped with SIGSTOP, so
// what was sent to it waits in its socket buffers and runs when it is thawed. A 503
// SERVICE_UNAVAILABLE must mean nothing was stored: a write cut off by the query timeout must not
// commit on the thaw (node-postgres alone lets it: its timeout only stops waiting). Only a commit
// already asked for may go either way, and says so (OUTCOME_UNKNOWN).
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import t, { type Test } from 'tap'
import { createDatabase } from '../../src/db/client.ts'
import { UnansweredQueryError } from '../../src/db/commit-guard.ts'
import { startEmbeddedPostgres } from '../../src/db/embedded.ts'
import { applyMigrations } from '../../src/db/migrate.ts'
import { toAppError } from '../../src/plugins/errors.ts'
import { build } from '../helper.ts'
import { bearer, createChannelId, disableLoopGuard, seedWorkspace } from '../support/index.ts'

const STATEMENT_TIMEOUT_MS = 1_000
const QUERY_TIMEOUT_MS = 1_500
const POOL_SIZE = 4

/**
 * The processes whose parent is `parent`, read from /proc without blocking the event loop: the
 * app under test runs in this process, and a freeze must not pause it (it would hold a post
 * between two of its messages to PostgreSQL, which no real freeze does).
 */
async function childrenOf(parent: number): Promise<number[]> {
  const children: number[] = []
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    // "pid (comm) state ppid …": comm may hold spaces, so read after its closing parenthesis.
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '')
    if (stat && Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === parent) children.push(Number(entry))
  }
  return children
}

interface Cluster {
  url: (database: string) => string
  /** SIGSTOP to every PostgreSQL process (the postmaster first: it forks no new backend). */
  freeze(): Promise<void>
  thaw(): void
  /**
   * Resolves once no backend of `database` but the asking one is running a statement, twice in a
   * row 200 ms apart: a thawed backend reads what waited in its socket within milliseconds.
   */
  settled(database: string): Promise<void>
}

async function frozenCluster(t: Test): Promise<Cluster> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ams-frozen-'))
  const server = await startEmbeddedPostgres(dir, () => {}, { database: 'ams', settings: { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off' } })
  let frozen: number[] = []
  /**
   * SIGCONT to every frozen process, the postmaster last. A backend can end while frozen (its
   * exit was under way when the SIGSTOP came), and the postmaster, once running, reaps it: its
   * SIGCONT then finds no process (ESRCH). That must not stop the thaw of the others: one left
   * stopped held the test until tap's timeout (a CI run hung 10 minutes on it).
   */
  const thaw = (): void => {
    for (const pid of frozen.toReversed()) {
      try {
        process.kill(pid, 'SIGCONT')
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error
      }
    }
    frozen = []
  }
  t.teardown(async () => {
    thaw()
    await server.stop()
    await rm(dir, { recursive: true, force: true })
  })
  const url = (database: string): string => {
    const u = new URL(server.url)
    u.pathname = `/${database}`
    return u.toString()
  }
  return {
    url,
    async freeze() {
      process.kill(server.pid, 'SIGSTOP')
      frozen = [server.pid]
      for (const pid of await childrenOf(server.pid)) {
        try {
          process.kill(pid, 'SIGSTOP')
          frozen.push(pid)
        } catch (error) {
          // A backend that ended between the listing and the signal (a pool closing an idle
          // connection) has nothing to freeze. Anything else: thaw what was frozen, or the
          // test's own teardown (closing its pool on frozen backends) would wait forever.
          if ((error as NodeJS.ErrnoException).code === 'ESRCH') continue
          thaw()
          throw error
        }
      }
    },
    thaw,
    async settled(database) {
      const client = new pg.Client({ connectionString: url(database) })
      await client.connect()
      try {
        for (let quiet = 0; quiet < 2;) {
          await sleep(200)
          const { rows } = await client.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND state <> 'idle'")
          quiet = rows[0]!.n === 0 ? quiet + 1 : 0
        }
      } finally {
        await client.end()
      }
    },
  }
}

t.test('PostgreSQL frozen under SIGSTOP', async (t) => {
  const cluster = await frozenCluster(t)

  t.test('a write cut off by the query timeout is not committed on the thaw', async (t) => {
    const url = cluster.url('ams')
    const db = createDatabase(url, 2, { statementTimeoutMs: STATEMENT_TIMEOUT_MS, queryTimeoutMs: QUERY_TIMEOUT_MS })
    t.teardown(db.close)
    await db.pool.query('CREATE TABLE probe (label text PRIMARY KEY)')
    const stored = async (label: string): Promise<boolean> => ((await db.pool.query('SELECT 1 FROM probe WHERE label = $1', [label])).rowCount ?? 0) > 0
    // Warm connections: each statement below is written to a connected, frozen backend.
    const [a, b] = await Promise.all([db.pool.connect(), db.pool.connect()])
    a.release()
    b.release()

    await cluster.freeze()
    const autocommit = await db.pool.query("INSERT INTO probe VALUES ('autocommit')").catch((error: unknown) => error)
    cluster.thaw()
    t.match(autocommit, { name: 'UnansweredQueryError', outcome: 'nothing' }, 'an autocommit INSERT: cut off before its commit')
    t.match(toAppError(autocommit), { statusCode: 503, code: 'SERVICE_UNAVAILABLE' })
    await cluster.settled('ams')
    t.notOk(await stored('autocommit'), 'and not committed when PostgreSQL thawed')

    const inBlock = await db.pool.connect()
    await inBlock.query('BEGIN')
    await cluster.freeze()
    const statement = await inBlock.query("INSERT INTO probe VALUES ('in a transaction')").catch((error: unknown) => error)
    cluster.thaw()
    inBlock.release(true)
    t.match(statement, { outcome: 'nothing' }, 'a statement of a transaction block: rolled back with its connection')
    await cluster.settled('ams')
    t.notOk(await stored('in a transaction'))

    const committing = await db.pool.connect()
    await committing.query('BEGIN')
    await committing.query("INSERT INTO probe VALUES ('committing')")
    await cluster.freeze()
    const commit = await committing.query('COMMIT').catch((error: unknown) => error)
    cluster.thaw()
    committing.release(true)
    t.ok(commit instanceof UnansweredQueryError && commit.outcome === 'unknown', 'a COMMIT cut off: the outcome is unknown')
    t.match(toAppError(commit), { statusCode: 503, code: 'OUTCOME_UNKNOWN', headers: { 'retry-after': '5' } })
    await cluster.settled('ams')
    t.ok(await stored('committing'), '(and indeed it committed when PostgreSQL thawed)')
  })

  t.test('posts under a freeze: every 201 is stored, no 503 SERVICE_UNAVAILABLE is', async (t) => {
    const url = cluster.url('posts')
    const admin = new pg.Client({ connectionString: cluster.url('ams') })
    await admin.connect()
    await admin.query('CREATE DATABASE posts')
    await admin.end()
    await applyMigrations(url)
    const { app, api } = await build(t, {
      databaseUrl: url,
      background: false,
      env: {
        DATABASE_POOL_SIZE: String(POOL_SIZE),
        DATABASE_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
        DATABASE_QUERY_TIMEOUT_MS: String(QUERY_TIMEOUT_MS),
        AUTH_CACHE_TTL_MS: '600000',
      },
    })
    const ws = await seedWorkspace(app)
    await disableLoopGuard(app)
    const channelId = await createChannelId(api, ws.primary.key, 'frozen')

    const outcomes: { text: string; status: number; code?: string }[] = []
    let posting = true
    const posters = Array.from({ length: 8 }, async (_, poster) => {
      for (let n = 0; posting; n++) {
        const text = `frozen ${poster}.${n}`
        const res = await app.inject({ method: 'POST', url: `/api/v1/channels/${channelId}/messages`, headers: { ...bearer(ws.primary.key), 'content-type': 'application/json' }, payload: { text } })
        outcomes.push({ text, status: res.statusCode, code: res.statusCode === 201 ? undefined : res.json<{ code: string }>().code })
      }
    })
    const created = (): number => outcomes.filter((o) => o.status === 201).length
    const untilCreated = async (n: number, what: string): Promise<void> => {
      const deadline = Date.now() + 60_000
      while (created() < n) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
        await sleep(10)
      }
    }
    await untilCreated(40, 'posts before the freeze')
    // Every pooled connection open and idle: posts during the freeze are written to frozen
    // backends (the case that used to commit on the thaw), not only queued for a connection.
    await Promise.all(Array.from({ length: POOL_SIZE }, () => app.db.pool.query('SELECT pg_sleep(0.05)')))
    await cluster.freeze()
    // Longer than the pool's 5 s wait for a connection too: new connections time out as well.
    await sleep(QUERY_TIMEOUT_MS * 4)
    cluster.thaw()
    await untilCreated(created() + 40, 'posts after the thaw')
    posting = false
    await Promise.all(posters)
    await cluster.settled('posts')

    const { rows } = await app.db.pool.query<{ text: string }>('SELECT text FROM messages WHERE channel_id = $1', [channelId])
    const stored = new Set(rows.map((r) => r.text))
    const unavailable = outcomes.filter((o) => o.status === 503 && o.code === 'SERVICE_UNAVAILABLE')
    const unknown = outcomes.filter((o) => o.code === 'OUTCOME_UNKNOWN')
    t.ok(unavailable.length > 0, `the freeze was felt: ${unavailable.length} posts answered 503 SERVICE_UNAVAILABLE, ${unknown.length} OUTCOME_UNKNOWN`)
    t.same(
      outcomes.filter((o) => o.status !== 201 && o.status !== 503),
      [],
      'every post answered 201 or 503',
    )
    t.same(
      outcomes.filter((o) => o.status === 201 && !stored.has(o.text)),
      [],
      'every post answered 201 is stored',
    )
    t.same(
      unavailable.filter((o) => stored.has(o.text)),
      [],
      'no post answered 503 SERVICE_UNAVAILABLE is stored, not even after the thaw',
    )
  })
})
