// Database access of the event bus: the outbox rows a transaction writes, and the outbox's id
// sequence the background scans take their floor from (./outbox-floor.ts).
import type pg from 'pg'
import type { Prisma } from '../db/client.ts'

/** Writes outbox rows in the caller's transaction. */
export async function insertOutboxEvents(tx: Prisma.TransactionClient, rows: Prisma.OutboxEventCreateManyInput[]): Promise<void> {
  await tx.outboxEvent.createMany({ data: rows })
}

/** The highest id the outbox's sequence has handed out (0 before the first). */
export async function outboxHighWater(pool: pg.Pool): Promise<bigint> {
  const { rows } = await pool.query<{ id: string }>('SELECT (CASE WHEN is_called THEN last_value ELSE 0 END)::text AS id FROM outbox_events_id_seq')
  return BigInt(rows[0]!.id)
}
