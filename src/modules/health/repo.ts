// The readiness probe's database check: one round trip on the shared pool.
import type pg from 'pg'

export async function pingDatabase(pool: pg.Pool): Promise<void> {
  await pool.query('SELECT 1')
}
