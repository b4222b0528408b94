// Loop protection (docs/loops.md) when inserts run side by side: the statement that inserts a post
// reads the message before it from its own snapshot, and a batched insert committed meanwhile (one
// of the group commit's statements in flight) is not in it. The guard function reads the message
// before it again once it holds the conversation's row, so a post that waited behind another
// statement's turn sees what that statement committed (docs/decisions.md, "The loop guard reads
// the previous message under its lock"). Each test holds a transaction open as that other
// statement would, with the guard's row locked, and commits it while the post waits.
import t from 'tap'
import pg from 'pg'
import { setup, type Ctx } from './fixtures/support.ts'
import { LISTEN_ENV, listens, postAs, room, settings } from './fixtures/loops.ts'
import { eventually } from '../support/wait.ts'
import { uuidv7 } from '../../src/lib/ids.ts'

interface Guard {
  stamps: Date[]
  pair: string[] | null
}

/** Two listening agents in a room, one turn of theirs allowed, and the guard's row made by a turn then cleared by a human. */
async function scene(t: Parameters<typeof setup>[0]) {
  const c = await setup(t, LISTEN_ENV)
  await settings(c, { loop_guard_max_turns: 1, loop_guard_window_seconds: 600, loop_guard_max_depth: 0 })
  await listens(t, c, 0)
  await listens(t, c, 1)
  const channel = await room(c)
  t.equal((await postAs(c.api, c.tok.a2, channel, { text: 'first' })).statusCode, 201)
  t.equal((await postAs(c.api, c.tok.a1, channel, { text: 'a turn: the guard keeps a row' })).statusCode, 201)
  t.equal((await postAs(c.api, c.tok.owner, channel, { text: 'a human: the count starts over' })).statusCode, 201)
  t.equal((await postAs(c.api, c.tok.a2, channel, { text: 'agent-2 speaks' })).statusCode, 201)
  const guard = async (): Promise<Guard> =>
    (await c.app.db.pool.query<Guard>("SELECT stamps, pair::text[] AS pair FROM loop_guards WHERE channel_id = $1 AND thread_id = '00000000-0000-0000-0000-000000000000'", [channel])).rows[0]!
  t.same(await guard(), { stamps: [], pair: null }, 'no turn counted after the human')
  return { c, channel, guard }
}

/** One turn of `pair` on record in the channel's guard row, as the guard function writes it. */
const recordTurn = (db: Pick<pg.Client, 'query'>, channel: string, pair: string[]) =>
  db.query("UPDATE loop_guards SET stamps = ARRAY[now()]::timestamptz(3)[], pair = $2::uuid[] WHERE channel_id = $1 AND thread_id = '00000000-0000-0000-0000-000000000000'", [
    channel,
    [...pair].sort(),
  ])

/**
 * Another statement in flight: the guard's row locked, `author`'s message inserted and, when
 * `turnOf` is given, a turn of that pair recorded, as the batched insert does; not committed.
 */
async function holdAnotherStatement(t: Parameters<typeof setup>[0], c: Ctx, channel: string, author: { id: string; type: 'AGENT' | 'HUMAN'; name: string }, turnOf?: string[]) {
  const other = new pg.Client({ connectionString: c.config.databaseUrl })
  await other.connect()
  t.teardown(() => other.end())
  await other.query('BEGIN')
  await other.query("SELECT 1 FROM loop_guards WHERE channel_id = $1 AND thread_id = '00000000-0000-0000-0000-000000000000' FOR UPDATE", [channel])
  await other.query('INSERT INTO messages (id, channel_id, author_id, author_type, author_name, text, created_at) VALUES ($1, $2, $3, $4, $5, $6, now())', [
    uuidv7(),
    channel,
    author.id,
    author.type,
    author.name,
    'committed while the next post waits',
  ])
  if (turnOf) {
    await recordTurn(other, channel, turnOf)
  }
  return other
}

/** Posts as `token` while `other` holds the guard's row; commits `other` once the post waits for it. */
async function postBehind(c: Ctx, other: pg.Client, token: string, channel: string, text: string) {
  const answer = postAs(c.api, token, channel, { text })
  await eventually(async () => {
    const { rows } = await c.app.db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")
    return rows[0]!.n > 0 ? true : null
  }, 'the post waiting for the guard row')
  await other.query('COMMIT')
  return answer
}

t.test("an agent's post behind its own message committed meanwhile takes no turn, though its snapshot saw another agent's before it", async (t) => {
  const { c, channel, guard } = await scene(t)
  const a1 = c.ws.agents[0]!
  const a2 = c.ws.agents[1]!
  // agent-1's answer to agent-2 is in flight in another statement (the limit's one turn)...
  const other = await holdAnotherStatement(t, c, channel, { id: a1.id, type: 'AGENT', name: a1.name }, [a1.id, a2.id])
  // ...and agent-1's next post starts now: its snapshot's newest message is agent-2's.
  const res = await postBehind(c, other, c.tok.a1, channel, 'and one more thing')
  t.equal(res.statusCode, 201, 'admitted: it follows its own message')
  t.same((await guard()).pair?.sort(), [a1.id, a2.id].sort(), 'the pair is unchanged')
  t.equal((await guard()).stamps.length, 1, 'one turn counted, not two')
  // A real answer of agent-2 now is the pair's second turn: refused, as before.
  t.equal((await postAs(c.api, c.tok.a2, channel, { text: 'answering back' })).statusCode, 429)
})

t.test("an agent's post behind a human's message committed meanwhile takes no turn, and the count starts over", async (t) => {
  const { c, channel, guard } = await scene(t)
  const a1 = c.ws.agents[0]!
  const a2 = c.ws.agents[1]!
  // A turn of the pair is on record; then a human's message is in flight.
  await recordTurn(c.app.db.pool, channel, [a1.id, a2.id])
  const other = await holdAnotherStatement(t, c, channel, { id: c.ws.owner.id, type: 'HUMAN', name: 'owner' })
  const res = await postBehind(c, other, c.tok.a1, channel, 'after the human')
  t.equal(res.statusCode, 201, 'admitted: a human spoke before it')
  t.same(await guard(), { stamps: [], pair: null }, 'the count starts over')
})

t.test("an agent's post behind a third agent's message committed meanwhile is a turn of that pair", async (t) => {
  const { c, channel, guard } = await scene(t)
  const a1 = c.ws.agents[0]!
  const a2 = c.ws.agents[1]!
  const primary = c.ws.primary
  t.equal((await c.api({ method: 'POST', url: `/api/v1/channels/${channel}/members`, headers: { authorization: `Bearer ${c.tok.owner}` }, payload: { user_id: primary.id } })).statusCode, 201)
  // A turn of agent-1 and agent-2 is on record; the primary agent's message is in flight.
  await recordTurn(c.app.db.pool, channel, [a1.id, a2.id])
  const other = await holdAnotherStatement(t, c, channel, { id: primary.id, type: 'AGENT', name: primary.name })
  // agent-1's snapshot sees agent-2's message before it: a second turn of that pair, refused. It follows the primary's.
  const res = await postBehind(c, other, c.tok.a1, channel, 'answering the primary')
  t.equal(res.statusCode, 201, 'admitted: the first turn of another pair')
  t.same((await guard()).pair?.sort(), [a1.id, primary.id].sort(), 'the count is of the new pair')
  t.equal((await guard()).stamps.length, 1)
})
