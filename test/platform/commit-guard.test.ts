// How each statement is sent (src/db/commit-guard.ts), and so what a cut-off leaves behind: the
// rule alone, with nothing started (the frozen server itself: frozen-database.test.ts).
import t from 'tap'
import { planOf } from '../../src/db/commit-guard.ts'
import { build } from '../helper.ts'

t.test('outside a transaction block a statement waits for its answer before its commit', async (t) => {
  t.equal(planOf('INSERT INTO t VALUES ($1)', [1], 'I'), 'deferred')
  t.equal(planOf('WITH d AS (UPDATE t SET x = 1 RETURNING x) SELECT * FROM d', [], 'I'), 'deferred')
  t.equal(planOf('SELECT loop_guard_admit_many($1)', [[]], 'I'), 'deferred', 'a SELECT may write: deferred too')
  t.equal(planOf('SELECT 1', undefined, 'I'), 'deferred', 'no parameters: one statement still goes by the extended protocol')
  t.equal(planOf('SELECT 1;', undefined, 'I'), 'deferred', 'a trailing semicolon is one statement')
})

t.test('what opens, is inside, or rolls back a transaction block cannot commit on a cut-off', async (t) => {
  t.equal(planOf('BEGIN', [], 'I'), 'uncommitted')
  t.equal(planOf('  start transaction isolation level serializable', [], 'I'), 'uncommitted')
  t.equal(planOf('INSERT INTO t VALUES ($1)', [1], 'T'), 'uncommitted')
  t.equal(planOf('SELECT 1', [], 'E'), 'uncommitted', 'in a failed block')
  t.equal(planOf('ROLLBACK', [], 'T'), 'uncommitted')
  t.equal(planOf('ROLLBACK TO SAVEPOINT s1', [], 'T'), 'uncommitted')
})

t.test('a commit already asked for, or a statement that cannot wait for it, leaves the outcome unknown', async (t) => {
  t.equal(planOf('COMMIT', [], 'T'), 'committing')
  t.equal(planOf('end', [], 'T'), 'committing')
  t.equal(planOf("PREPARE TRANSACTION 'x'", [], 'T'), 'committing')
  t.equal(planOf('UPDATE a SET x = 1; UPDATE b SET y = 2', undefined, 'I'), 'committing', 'several statements in one text: simple protocol only')
  t.equal(planOf('COPY t FROM STDIN', undefined, 'I'), 'committing')
  t.equal(planOf('SELECT 1', [], null), 'committing', 'a connection whose state is unknown')
  t.equal(planOf('ENDPOINTS', [], 'I'), 'deferred', 'END only as a word')
})

t.test('a statement its caller declares read-only has nothing to commit: sent with its Sync', async (t) => {
  t.equal(planOf('SELECT x FROM t WHERE id = $1', [1], 'I', true), 'reads')
  t.equal(planOf('SELECT x FROM t WHERE id = $1', [1], 'T', true), 'uncommitted', 'inside a block the block decides')
  t.equal(planOf('COMMIT', [], 'T', true), 'committing', 'a COMMIT is never a read')
  t.equal(planOf('SELECT 1', [], null, true), 'committing', 'a connection whose state is unknown')
})

t.test('on a pooled connection a read-only statement is one round trip, any other autocommit statement two', async (t) => {
  const { app } = await build(t)
  const client = await app.db.pool.connect()
  t.teardown(() => client.release())
  const wire = (client as unknown as { connection: { flush(): void; sync(): void } }).connection
  const sent: string[] = []
  for (const message of ['flush', 'sync'] as const) {
    const original = wire[message].bind(wire)
    wire[message] = () => {
      sent.push(message)
      original()
    }
  }
  // What goes out before PostgreSQL answers: the Sync with the statement, or a Flush and the Sync later.
  const firstSent = async (config: object): Promise<string[]> => {
    sent.length = 0
    const answer = client.query(config as never) as unknown as Promise<{ rows: { n: number }[] }>
    const before = [...sent]
    t.same((await answer).rows, [{ n: 2 }])
    t.same(sent, before[0] === 'sync' ? ['sync'] : ['flush', 'sync'], 'one Sync in all')
    return before
  }
  t.same(await firstSent({ text: 'SELECT $1::int + 1 AS n', values: [1], readOnly: true }), ['sync'])
  t.same(await firstSent({ text: 'SELECT $1::int + 1 AS n', values: [1] }), ['flush'], 'not declared: its commit waits for the answer')
})
