// The planner (src/workers/planner.ts) turns committed events into inbox items and deliveries in
// the background. A kick runs a pass now, but a pass skips a row another client holds locked at
// that moment (the relay, or the other instance): the next commit, tick or full pass plans it. A
// test that reads an inbox right after a kick could miss that row under load.
import type { FastifyInstance } from 'fastify'
import { eventually } from './wait.ts'

/** Kicks the planner until no committed event is left unplanned. */
export async function untilPlanned(app: FastifyInstance): Promise<void> {
  await eventually(async () => {
    await app.deliveries!.planner.kick()
    const { rows } = await app.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM outbox_events WHERE planned_at IS NULL')
    return rows[0]!.n === 0
  }, 'every committed event planned')
}
