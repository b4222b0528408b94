// PostgreSQL going away while a transaction holds a pooled client between two statements (the
// outbox relay awaits the broker mid-transaction) must not kill the process: the compose smoke
// test saw an instance exit with "read ECONNRESET" when PostgreSQL was stopped. The database is
// reached through a proxy the test cuts, so the shared PostgreSQL is never stopped.
import { once } from 'node:events'
import type { Socket } from 'node:net'
import t from 'tap'
import { createDatabase } from '../../src/db/client.ts'
import { pgProxy } from '../pg-proxy.ts'
import { dropWhenDone } from '../helper.ts'
import { createTestDatabase } from '../setup/database.ts'

t.test('a checked-out client that loses its server fails its next statement, not the process', async (t) => {
  const target = await createTestDatabase()
  dropWhenDone(target.drop)
  const proxy = await pgProxy(t, target.url)
  const db = createDatabase(proxy.through(target.url), 2)
  t.teardown(db.close)
  const uncaught: unknown[] = []
  const record = (error: unknown): void => void uncaught.push(error)
  process.on('uncaughtException', record)
  t.teardown(() => process.off('uncaughtException', record))

  const client = await db.pool.connect()
  await client.query('BEGIN')
  // Wait on the client's own socket (not an 'error' listener, which would hide the failure).
  const socket = (client as unknown as { connection: { stream: Socket } }).connection.stream
  const closed = once(socket, 'close')
  await proxy.cut()
  await closed
  await t.rejects(client.query('SELECT 1'), 'the next statement on it fails')
  client.release()
  t.same(uncaught, [], 'no uncaught exception')

  await proxy.restore()
  const { rows } = await db.pool.query<{ ok: number }>('SELECT 1 AS ok')
  t.same(rows, [{ ok: 1 }], 'the pool serves again with a fresh connection')
})
