// The loop guard's SQL (docs/loops.md; its rules are ./loop-guard.ts): the admission of a turn,
// run inside the statement that inserts a message (admitOneCtes, used by ./repo.ts) or before a
// stream's own insert (admitStreamTurn), and the chain depth of the message an event is about.
import type pg from 'pg'
import type { Prisma } from '../../db/client.ts'

/** The loop guard's inputs to the statement (loop_guard_admit_many, docs/loops.md). */
export interface GuardParams {
  /** The author posts over a socket that hears the conversation (webhooks and integrations are looked up in SQL). */
  listening: boolean
  maxTurns: number
  windowMs: number
}

// Whether an author could hear a conversation, besides the socket it posts over (`socket`): an
// active webhook of its own, or an active integration acting for it, subscribed to messages.
const listensSql = (author: string, socket: string): string => `(${socket}
      OR EXISTS (SELECT 1 FROM webhooks w WHERE w.agent_id = ${author} AND w.active AND 'message.created' = ANY(w.events))
      OR EXISTS (SELECT 1 FROM integrations n WHERE n.active AND 'message.created' = ANY(n.events)
                   AND (n.all_agents OR EXISTS (SELECT 1 FROM integration_agents ia WHERE ia.integration_id = n.id AND ia.agent_id = ${author}))))`

const NIL = `'00000000-0000-0000-0000-000000000000'::uuid`

// The loop guard for one message ($2 its channel, `thread` its root or null, $3/$4 its author, $7
// its time; `g` the first of the guard's parameters: listening, turns, window), as two CTEs:
// `turn` holds the post when the guard has work to do (docs/loops.md): an agent's post that
// follows, within the window, another agent's message it could have heard (`prev` its author), or
// a human's where turns were counted (prev null). `adm` is the guard's answer for it; a post that
// takes no turn reads and writes no guard state.
export const admitOneCtes = (thread: string, g: number, conds: string[]): string[] => {
  const last =
    thread === 'NULL::uuid'
      ? `SELECT author_id, author_type, created_at FROM messages WHERE channel_id = $2 AND thread_id IS NULL ORDER BY id DESC LIMIT 1`
      : `SELECT author_id, author_type, created_at FROM (
         (SELECT id, author_id, author_type, created_at FROM messages WHERE thread_id = ${thread} ORDER BY id DESC LIMIT 1)
         UNION ALL SELECT id, author_id, author_type, created_at FROM messages WHERE id = ${thread}) u ORDER BY id DESC LIMIT 1`
  const member = 'EXISTS (SELECT 1 FROM channel_members WHERE channel_id = $2 AND member_id = $3)'
  return [
    `turn AS (
       SELECT CASE WHEN $4::actor_type = 'AGENT' THEN p.author_id END AS prev
         FROM (SELECT 1) one LEFT JOIN (${last}) p ON true
        WHERE ${[member, ...conds].join(' AND ')}
          AND CASE WHEN $4::actor_type = 'AGENT'
                   THEN p.author_type = 'AGENT' AND p.author_id <> $3 AND p.created_at > $7::timestamptz - make_interval(secs => $${g + 2}::int / 1000.0)
                        AND ${listensSql('$3::uuid', `$${g}::boolean`)}
                   ELSE EXISTS (SELECT 1 FROM loop_guards lg WHERE lg.channel_id = $2 AND lg.thread_id = coalesce(${thread}, ${NIL}) AND lg.pair IS NOT NULL)
              END
     )`,
    `adm AS (
       SELECT x.next FROM turn, loop_guard_admit_turns(ARRAY[$2]::uuid[], ARRAY[${thread}]::uuid[], ARRAY[$3]::uuid[], ARRAY[turn.prev]::uuid[],
                                                       ARRAY[true], ARRAY[$7]::timestamptz[], $${g + 1}::int, $${g + 2}::int) x
     )`,
  ]
}

// The loop guard for many messages (the batched insert, ./repo.ts), as CTEs over its rows `mem`
// (ord, channel_id, author_id, author_type, created_at, listening), all of them roots; `turns` and
// `window` are the numbers of the guard's parameters. Each post's previous message is the one
// before it in the batch, or for the first of its channel the newest stored there (one index probe
// per channel; the function reads that one again under the guard's lock, `fresh`, since another
// statement may have committed a newer message since this one's snapshot). Only turns (an agent's
// post after another agent's message within the window, the poster listening) and humans' posts
// where turns were counted go to the function; the other posts read and write no guard state.
// `adm` answers (ord, next) for the posts that went.
export const admitManyCtes = (turns: number, window: number): string => `last AS (
    SELECT c.channel_id, l.author_id, l.author_type, l.created_at
      FROM (SELECT DISTINCT channel_id FROM mem) c CROSS JOIN LATERAL (
        SELECT author_id, author_type, created_at FROM messages
         WHERE channel_id = c.channel_id AND thread_id IS NULL ORDER BY id DESC LIMIT 1) l
  ), seq AS (
    SELECT x.ord, x.channel_id, x.author_id, x.author_type, x.created_at, x.listening,
           CASE WHEN row_number() OVER w = 1 THEN l.author_id ELSE lag(x.author_id) OVER w END AS prev_author,
           CASE WHEN row_number() OVER w = 1 THEN l.author_type ELSE lag(x.author_type) OVER w END AS prev_type,
           CASE WHEN row_number() OVER w = 1 THEN l.created_at ELSE lag(x.created_at) OVER w END AS prev_at,
           row_number() OVER w = 1 AS fresh
      FROM mem x LEFT JOIN last l ON l.channel_id = x.channel_id
    WINDOW w AS (PARTITION BY x.channel_id ORDER BY x.created_at, x.ord)
  ), items AS (
    SELECT ord, channel_id, author_id, created_at, prev_author AS prev, fresh FROM seq s
     WHERE s.author_type = 'AGENT' AND s.prev_type = 'AGENT' AND s.prev_author <> s.author_id
       AND s.prev_at > s.created_at - make_interval(secs => $${window}::int / 1000.0)
       AND ${listensSql('s.author_id', 's.listening')}
    UNION ALL
    SELECT ord, channel_id, author_id, created_at, NULL, fresh FROM seq s
     WHERE s.author_type <> 'AGENT'
       AND EXISTS (SELECT 1 FROM loop_guards lg WHERE lg.channel_id = s.channel_id AND lg.thread_id = ${NIL} AND lg.pair IS NOT NULL)
  ), f AS (
    SELECT array_agg(ord ORDER BY ord) AS o, array_agg(channel_id ORDER BY ord) AS c, array_agg(NULL::uuid ORDER BY ord) AS t,
           array_agg(author_id ORDER BY ord) AS a, array_agg(prev ORDER BY ord) AS p,
           array_agg(fresh ORDER BY ord) AS fr, array_agg(created_at ORDER BY ord) AS at
      FROM items HAVING count(*) > 0
  ), adm AS (
    SELECT f.o[x.ord] AS ord, x.next FROM f, loop_guard_admit_turns(f.c, f.t, f.a, f.p, f.fr, f.at, $${turns}::int, $${window}::int) x
  )`

// A streamed message takes its turn at its start, like a post (docs/loops.md): the same previous
// message (of the channel's roots, or of the thread with its root), the same "could have heard
// it", the same admission. $1 channel, $2 thread root or null, $3 author, $4 time, $5 listening
// over a socket here, $6 turns, $7 window (ms). No row: no turn. The stream's own insert follows
// in the same transaction, so a refused or failed start records nothing.
const ADMIT_STREAM_TURN_SQL = `
  WITH last AS (
    SELECT author_id, author_type, created_at FROM (
      (SELECT id, author_id, author_type, created_at FROM messages WHERE $2::uuid IS NULL AND channel_id = $1 AND thread_id IS NULL ORDER BY id DESC LIMIT 1)
      UNION ALL (SELECT id, author_id, author_type, created_at FROM messages WHERE $2::uuid IS NOT NULL AND thread_id = $2::uuid ORDER BY id DESC LIMIT 1)
      UNION ALL SELECT id, author_id, author_type, created_at FROM messages WHERE $2::uuid IS NOT NULL AND id = $2::uuid) u ORDER BY id DESC LIMIT 1
  ), turn AS (
    SELECT author_id AS prev FROM last
     WHERE author_type = 'AGENT' AND author_id <> $3::uuid AND created_at > $4::timestamptz - make_interval(secs => $7::int / 1000.0)
       AND ${listensSql('$3::uuid', '$5::boolean')}
  )
  SELECT x.next FROM turn, loop_guard_admit_turns(ARRAY[$1::uuid], ARRAY[$2::uuid], ARRAY[$3::uuid], ARRAY[turn.prev], ARRAY[true], ARRAY[$4::timestamptz], $6::int, $7::int) x`

/** The loop guard's admission of a stream's start: null when admitted (or no turn), else when the next turn is. */
export async function admitStreamTurn(tx: Prisma.TransactionClient, s: { channelId: string; threadId: string | null; authorId: string; at: Date; guard: GuardParams }): Promise<Date | null> {
  const rows = await tx.$queryRawUnsafe<{ next: Date | null }[]>(ADMIT_STREAM_TURN_SQL, s.channelId, s.threadId, s.authorId, s.at, s.guard.listening, s.guard.maxTurns, s.guard.windowMs)
  return rows[0]?.next ?? null
}

// ---- the chain cap (the turn limit is admitOneCtes, in the insert) ----

/**
 * The chain depth of the message an event is about: a message's own id is the id of its
 * message.created event; other events (message.updated…) are looked up in the outbox while it
 * keeps them. Null when the event is unknown or not about a message.
 */
export async function chainDepthOfEvent(pool: pg.Pool, eventId: string): Promise<number | null> {
  const { rows } = await pool.query<{ depth: number | null }>({
    name: 'chain-depth-of-event',
    text: `SELECT coalesce(
              (SELECT chain_depth FROM messages WHERE id = $1::uuid),
              (SELECT m.chain_depth FROM outbox_events o JOIN messages m ON m.id = (o.payload->'message'->>'id')::uuid
                WHERE o.event_id = $1::uuid)) AS depth`,
    values: [eventId],
  })
  return rows[0]?.depth ?? null
}
