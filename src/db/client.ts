// One pg pool per process, shared by Prisma (through @prisma/adapter-pg) and by the few raw
// queries of hot paths, so both count against the same connection budget.
import { PrismaPg } from '@prisma/adapter-pg'
import pg from 'pg'
import { PrismaClient, type Prisma } from '../generated/prisma/client.ts'
import { guardClient } from './commit-guard.ts'

export type { PrismaClient }
export type { Prisma } from '../generated/prisma/client.ts'

/** The client or an open transaction: what a repo function runs its queries on. */
export type Db = PrismaClient | Prisma.TransactionClient

export interface Database {
  prisma: PrismaClient
  pool: pg.Pool
  close: () => Promise<void>
}

export interface DatabaseTimeouts {
  /** Server-side `statement_timeout` of every connection; 0 = none. */
  statementTimeoutMs?: number
  /**
   * Client-side bound of each query (a frozen or unreachable server); 0 = none. What a query cut
   * off by it may have left behind: ./commit-guard.ts.
   */
  queryTimeoutMs?: number
}

export function createDatabase(url: string, poolSize: number, timeouts: DatabaseTimeouts = {}): Database {
  // connectionTimeoutMillis also bounds the wait for a free pooled connection, so when every
  // connection hangs on a frozen server the requests behind them give up too (503, not a hang).
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    connectionTimeoutMillis: 5_000,
    ...(timeouts.statementTimeoutMs ? { statement_timeout: timeouts.statementTimeoutMs } : {}),
  })
  // A client that loses its server emits 'error' when no query is running on it: an idle one
  // (the pool's own listener) and also a checked-out one between two statements of a transaction
  // (the outbox relay awaits the broker mid-transaction). Without a listener the process dies;
  // with one, the next statement on that client fails, the caller rolls back and retries, and the
  // pool discards the broken client on release.
  pool.on('error', () => {})
  pool.on('connect', (client) => {
    client.on('error', () => {})
    // Commits only while the caller still waits, and the query timeout (./commit-guard.ts).
    guardClient(client, timeouts.queryTimeoutMs ?? 0)
  })
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) })
  return {
    prisma,
    pool,
    close: async () => {
      await prisma.$disconnect()
      await pool.end().catch(() => {})
    },
  }
}
