// Messages and their attachments. Posting is the hot path: one raw SQL statement inserts the
// message, its attachment, the remembered idempotent response and the outbox event atomically
// (docs/decisions.md, Conversations), and in the same statement looks the Idempotency-Key up and
// runs the loop guard's admission (docs/loops.md). Reads and edits go through Prisma.
import type { FastifyInstance } from 'fastify'
import type pg from 'pg'
import type { Prisma, PrismaClient } from '../../db/client.ts'
import { outboxRow } from '../../events/bus.ts'
import { Batcher } from '../../lib/batcher.ts'
import { isDatabaseOutage } from '../../lib/outage.ts'
import type { DomainEvent } from '../../events/types.ts'
import { approvalRecordOfJson, type ApprovalRecord } from '../approvals/schemas.ts'
import type { MessageRecord } from './schemas.ts'
import type { SearchEngine } from './search-engine.ts'

type Db = PrismaClient | Prisma.TransactionClient

export interface NewMessage {
  id: string
  channelId: string
  authorId: string
  authorType: 'AGENT' | 'HUMAN'
  authorName: string
  text: string
  createdAt: Date
  inReplyToEvent: string | null
  chainDepth: number
  /** A reply's root (threads); the root's summary is updated by the same statement. */
  threadId?: string | null
  attachment?: { id: string; fileName: string; contentType: string; size: number; storageName: string }
  /** The Idempotency-Key: a response remembered for it is answered instead of inserting (same statement). */
  idempotency?: { key: string; hash: string; body: unknown }
  event: DomainEvent<'message.created'>
  /** Mentioned member ids and the message.mentioned event, when it mentions anyone (not batched). */
  mentions?: { ids: string[]; event: DomainEvent<'message.mentioned'> | null }
  /** The loop guard, when it is on: admitted, counted and refused in the insert's own statement. */
  guard?: GuardParams
  /** The approval request it carries (docs/approvals.md): inserted by the same statement (not batched). */
  approval?: ApprovalRecord
}

/** The loop guard's inputs to the statement (loop_guard_admit_many, docs/loops.md). */
export interface GuardParams {
  /** The author posts over a socket that hears the conversation (webhooks and integrations are looked up in SQL). */
  listening: boolean
  maxTurns: number
  windowMs: number
}

/** A response remembered for the post's Idempotency-Key (expired or not: the caller decides). */
export interface RememberedResponse {
  requestHash: string
  statusCode: number
  body: unknown
  createdAt: Date
}

/**
 * What the statement did with a message: stored, refused by the loop guard (until when the next
 * turn is admitted), answered by a remembered response, or not stored (not a member, or the
 * thread's root is gone).
 */
export type InsertResult = { kind: 'inserted' } | { kind: 'absent' } | { kind: 'refused'; retryAt: Date } | { kind: 'remembered'; remembered: RememberedResponse }

const sqlCache = new Map<string, string>()

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
const admitOneCtes = (thread: string, g: number, conds: string[]): string[] => {
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
                                                       ARRAY[$7]::timestamptz[], $${g + 1}::int, $${g + 2}::int) x
     )`,
  ]
}

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
  SELECT x.next FROM turn, loop_guard_admit_turns(ARRAY[$1::uuid], ARRAY[$2::uuid], ARRAY[$3::uuid], ARRAY[turn.prev], ARRAY[$4::timestamptz], $6::int, $7::int) x`

/** The loop guard's admission of a stream's start: null when admitted (or no turn), else when the next turn is. */
export async function admitStreamTurn(tx: Prisma.TransactionClient, s: { channelId: string; threadId: string | null; authorId: string; at: Date; guard: GuardParams }): Promise<Date | null> {
  const rows = await tx.$queryRawUnsafe<{ next: Date | null }[]>(ADMIT_STREAM_TURN_SQL, s.channelId, s.threadId, s.authorId, s.at, s.guard.listening, s.guard.maxTurns, s.guard.windowMs)
  return rows[0]?.next ?? null
}

function insertSql(withAttachment: boolean, withIdempotency: boolean, withMentions = 0, withThread = false, withGuard = false, withApproval = false): string {
  const cacheKey = `${withAttachment}:${withIdempotency}:${withMentions}:${withThread}:${withGuard}:${withApproval}`
  let sql = sqlCache.get(cacheKey)
  if (sql) return sql
  // $1..$9 message, $10..$14 outbox, $15..$19 attachment, $20..$22 idempotency, then mentions:
  // the ids, and (withMentions 2) the message.mentioned outbox row; then the thread's root; then
  // the guard's three.
  const m = 15 + (withAttachment ? 5 : 0) + (withIdempotency ? 3 : 0)
  const root = m + (withMentions ? 1 : 0) + (withMentions === 2 ? 5 : 0)
  const g = root + (withThread ? 1 : 0)
  const ap = g + (withGuard ? 3 : 0)
  const n = withAttachment ? 20 : 15
  // The message goes in only if no response is remembered for its key and the guard admits it.
  const gates = [withIdempotency ? 'NOT EXISTS (SELECT 1 FROM prior)' : '', withGuard ? 'NOT EXISTS (SELECT 1 FROM adm WHERE next IS NOT NULL)' : ''].filter(Boolean)
  const gate = gates.map((c) => ` AND ${c}`).join('')
  const ctes: string[] = []
  if (withIdempotency) ctes.push(`prior AS (SELECT request_hash, status_code, response_body, created_at FROM idempotency_keys WHERE principal_id = $3 AND key = $${n})`)
  if (withGuard) {
    // A replay is not a post, and a reply whose root is gone is not counted.
    const conds = [
      withIdempotency ? 'NOT EXISTS (SELECT 1 FROM prior)' : '',
      withThread ? `EXISTS (SELECT 1 FROM messages r WHERE r.id = $${root}::uuid AND r.channel_id = $2 AND r.thread_id IS NULL)` : '',
    ].filter(Boolean)
    ctes.push(...admitOneCtes(withThread ? `$${root}::uuid` : 'NULL::uuid', g, conds))
  }
  if (withThread) ctes.push(rootSummaryCte(root, gate))
  const parts = [
    `WITH ${ctes.map((c) => `${c}, `).join('')}msg AS (
       INSERT INTO messages (id, channel_id, author_id, author_type, author_name, text, created_at, in_reply_to_event, chain_depth${withMentions ? ', mentions' : ''}${withThread ? ', thread_id' : ''})
       SELECT $1, $2, $3, $4::actor_type, $5, $6, $7, $8::uuid, $9::int${withMentions ? `, $${m}::uuid[]` : ''}${withThread ? ', (SELECT id FROM root)' : ''}
        WHERE ${withThread ? 'EXISTS (SELECT 1 FROM root)' : `EXISTS (SELECT 1 FROM channel_members WHERE channel_id = $2 AND member_id = $3)${gate}`}
       RETURNING id
     ), ob AS (
       INSERT INTO outbox_events (event_id, type, channel_id, payload, occurred_at)
       SELECT $10, $11, $12, $13::jsonb, $14 FROM msg
       RETURNING 1
     )`,
  ]
  if (withAttachment) {
    parts.push(`, att AS (
       INSERT INTO attachments (id, message_id, file_name, content_type, size, storage_name, created_at)
       SELECT $15, msg.id, $16, $17, $18, $19, $7 FROM msg
       RETURNING 1
     )`)
  }
  if (withIdempotency) {
    parts.push(`, idem AS (
       INSERT INTO idempotency_keys (principal_id, key, request_hash, status_code, response_body, created_at)
       SELECT $3, $${n}, $${n + 1}, 201, $${n + 2}::jsonb, $7 FROM msg
       RETURNING 1
     )`)
  }
  if (withApproval) {
    parts.push(`, appr AS (
       INSERT INTO approvals (message_id, channel_id, requester_id, action, arguments, summary, choices, approvers, expires_at, on_expiry, digest, created_at)
       SELECT msg.id, $2, $3, $${ap}, $${ap + 1}::jsonb, $${ap + 2}, $${ap + 3}::text[], $${ap + 4}::jsonb, $${ap + 5}::timestamptz, $${ap + 6}, $${ap + 7}, $7 FROM msg
       RETURNING 1
     )`)
  }
  if (withMentions === 2) {
    parts.push(`, mentioned AS (
       INSERT INTO outbox_events (event_id, type, channel_id, payload, occurred_at)
       SELECT $${m + 1}, $${m + 2}, $${m + 3}, $${m + 4}::jsonb, $${m + 5} FROM msg
       RETURNING 1
     )`)
  }
  const prior = (column: string, type: string) => (withIdempotency ? `(SELECT ${column} FROM prior)` : `NULL::${type}`)
  parts.push(
    ` SELECT (SELECT count(*)::int FROM msg) AS inserted, ${withGuard ? '(SELECT next FROM adm)' : 'NULL::timestamptz'} AS next,
             ${prior('request_hash', 'text')} AS request_hash, ${prior('status_code', 'int')} AS status_code, ${prior('response_body', 'jsonb')} AS response_body, ${prior('created_at', 'timestamptz')} AS remembered_at`,
  )
  sql = parts.join('')
  sqlCache.set(cacheKey, sql)
  return sql
}

// ---- threads: a reply and its root's summary in one statement ----
/**
 * The root's summary, updated under its row lock by the statement that inserts a reply:
 * reply_count, last_reply_at, recent_replier_ids (the author first, then the previous ones
 * without it, three at most). The reply is inserted only if the root was updated: it exists, is
 * in this channel, is not itself a reply, the author is a member, and `gate` holds (no remembered
 * response, the guard admits it); a root deleted meanwhile inserts nothing.
 */
function rootSummaryCte(param: number, gate = ''): string {
  return `root AS (
       UPDATE messages r
          SET reply_count = r.reply_count + 1,
              last_reply_at = greatest(r.last_reply_at, $7),
              recent_replier_ids = (
                SELECT array_agg(x ORDER BY o) FROM (
                  SELECT x, min(o) AS o FROM unnest(ARRAY[$3::uuid] || r.recent_replier_ids) WITH ORDINALITY AS u(x, o)
                   GROUP BY x ORDER BY min(o) LIMIT 3) s)
        WHERE r.id = $${param}::uuid AND r.channel_id = $2 AND r.thread_id IS NULL
          AND EXISTS (SELECT 1 FROM channel_members WHERE channel_id = $2 AND member_id = $3)${gate}
       RETURNING r.id
     )`
}
// ---- end threads ----

// Many messages without a file, mentions or thread in one statement: each row is inserted, with
// its outbox event (and its remembered response when it has an Idempotency-Key), only if its
// author is a member of its channel, no response is remembered for its key, and (guard on) the
// loop guard admits it. Answers one row per input row.
function insertManySql(withGuard: boolean): string {
  return `
  WITH input AS (
    SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::actor_type[], $5::text[], $6::text[], $7::timestamptz[],
                         $8::uuid[], $9::int[], $10::uuid[], $11::text[], $12::jsonb[], $13::timestamptz[],
                         $14::text[], $15::text[], $16::jsonb[], $17::boolean[])
      WITH ORDINALITY AS t(id, channel_id, author_id, author_type, author_name, text, created_at, in_reply_to_event, chain_depth,
                           event_id, type, payload, occurred_at, idem_key, idem_hash, idem_body, listening, ord)
  ), prior AS (
    -- LIMIT 1 keeps each lookup a probe of the primary key (no hash join over the table).
    SELECT i.ord, k.request_hash, k.status_code, k.response_body, k.created_at
      FROM input i CROSS JOIN LATERAL (
        SELECT request_hash, status_code, response_body, created_at FROM idempotency_keys
         WHERE principal_id = i.author_id AND key = i.idem_key LIMIT 1) k
     WHERE i.idem_key IS NOT NULL
  ), fresh AS (
    SELECT * FROM input i WHERE NOT EXISTS (SELECT 1 FROM prior p WHERE p.ord = i.ord)
  ), mem AS (
    SELECT i.* FROM fresh i
     WHERE EXISTS (SELECT 1 FROM channel_members m WHERE m.channel_id = i.channel_id AND m.member_id = i.author_id)
  )${
    // The guard (docs/loops.md): each post's previous message is the one before it in the batch,
    // or for the first of its channel the newest stored there (one index probe per channel). Only
    // turns (an agent's post after another agent's message within the window, the poster
    // listening) and humans' posts where turns were counted go to the function; the other posts
    // read and write no guard state.
    withGuard
      ? `, last AS (
    SELECT c.channel_id, l.author_id, l.author_type, l.created_at
      FROM (SELECT DISTINCT channel_id FROM mem) c CROSS JOIN LATERAL (
        SELECT author_id, author_type, created_at FROM messages
         WHERE channel_id = c.channel_id AND thread_id IS NULL ORDER BY id DESC LIMIT 1) l
  ), seq AS (
    SELECT x.ord, x.channel_id, x.author_id, x.author_type, x.created_at, x.listening,
           CASE WHEN row_number() OVER w = 1 THEN l.author_id ELSE lag(x.author_id) OVER w END AS prev_author,
           CASE WHEN row_number() OVER w = 1 THEN l.author_type ELSE lag(x.author_type) OVER w END AS prev_type,
           CASE WHEN row_number() OVER w = 1 THEN l.created_at ELSE lag(x.created_at) OVER w END AS prev_at
      FROM mem x LEFT JOIN last l ON l.channel_id = x.channel_id
    WINDOW w AS (PARTITION BY x.channel_id ORDER BY x.created_at, x.ord)
  ), items AS (
    SELECT ord, channel_id, author_id, created_at, prev_author AS prev FROM seq s
     WHERE s.author_type = 'AGENT' AND s.prev_type = 'AGENT' AND s.prev_author <> s.author_id
       AND s.prev_at > s.created_at - make_interval(secs => $19::int / 1000.0)
       AND ${listensSql('s.author_id', 's.listening')}
    UNION ALL
    SELECT ord, channel_id, author_id, created_at, NULL FROM seq s
     WHERE s.author_type <> 'AGENT'
       AND EXISTS (SELECT 1 FROM loop_guards lg WHERE lg.channel_id = s.channel_id AND lg.thread_id = ${NIL} AND lg.pair IS NOT NULL)
  ), f AS (
    SELECT array_agg(ord ORDER BY ord) AS o, array_agg(channel_id ORDER BY ord) AS c, array_agg(NULL::uuid ORDER BY ord) AS t,
           array_agg(author_id ORDER BY ord) AS a, array_agg(prev ORDER BY ord) AS p, array_agg(created_at ORDER BY ord) AS at
      FROM items HAVING count(*) > 0
  ), adm AS (
    SELECT f.o[x.ord] AS ord, x.next FROM f, loop_guard_admit_turns(f.c, f.t, f.a, f.p, f.at, $18::int, $19::int) x
  )`
      : ''
  }, ok AS (
    SELECT i.* FROM mem i${withGuard ? ' WHERE NOT EXISTS (SELECT 1 FROM adm a WHERE a.ord = i.ord AND a.next IS NOT NULL)' : ''}
  ), msg AS (
    INSERT INTO messages (id, channel_id, author_id, author_type, author_name, text, created_at, in_reply_to_event, chain_depth)
    SELECT id, channel_id, author_id, author_type, author_name, text, created_at, in_reply_to_event, chain_depth FROM ok ORDER BY ord
    RETURNING id
  ), ob AS (
    INSERT INTO outbox_events (event_id, type, channel_id, payload, occurred_at)
    SELECT event_id, type, channel_id, payload, occurred_at FROM ok ORDER BY ord
    RETURNING 1
  ), idem AS (
    INSERT INTO idempotency_keys (principal_id, key, request_hash, status_code, response_body, created_at)
    SELECT author_id, idem_key, idem_hash, 201, idem_body, created_at FROM ok WHERE idem_key IS NOT NULL
    RETURNING 1
  )
  SELECT i.ord::int AS ord, (m.id IS NOT NULL) AS inserted, ${withGuard ? 'a.next' : 'NULL::timestamptz AS next'},
         p.request_hash, p.status_code, p.response_body, p.created_at AS remembered_at
    FROM input i LEFT JOIN msg m ON m.id = i.id LEFT JOIN prior p ON p.ord = i.ord${withGuard ? ' LEFT JOIN adm a ON a.ord = i.ord' : ''}`
}
const INSERT_MANY_SQL = { plain: insertManySql(false), guarded: insertManySql(true) }

interface ResultRow {
  inserted: boolean | number
  /** pg answers -Infinity (a number) for '-infinity'. */
  next: Date | number | null
  request_hash: string | null
  status_code: number | null
  response_body: unknown
  remembered_at: Date | null
}

function resultOf(r: ResultRow): InsertResult {
  if (r.request_hash !== null && r.remembered_at) {
    return { kind: 'remembered', remembered: { requestHash: r.request_hash, statusCode: r.status_code!, body: r.response_body, createdAt: r.remembered_at } }
  }
  if (r.inserted === true || r.inserted === 1) return { kind: 'inserted' }
  // '-infinity': the channel is gone meanwhile; a time: refused until then.
  if (r.next instanceof Date && Number.isFinite(r.next.getTime())) return { kind: 'refused', retryAt: r.next }
  return { kind: 'absent' }
}

type InsertOutcome = { result: InsertResult } | { error: unknown }

const guardKey = (m: NewMessage): string => (m.guard ? `${m.guard.maxTurns}/${m.guard.windowMs}` : 'off')

async function insertBatch(pool: pg.Pool, rows: NewMessage[]): Promise<InsertOutcome[]> {
  const one = (m: NewMessage): Promise<InsertOutcome> =>
    insertOne(pool, m).then(
      (result) => ({ result }),
      (error: unknown) => ({ error }),
    )
  if (rows.length === 1) return [await one(rows[0]!)]
  // One statement per guard setting: the same for every row but for the seconds after a change.
  const groups = new Map<string, number[]>()
  rows.forEach((m, i) => groups.set(guardKey(m), [...(groups.get(guardKey(m)) ?? []), i]))
  const outcomes: InsertOutcome[] = new Array(rows.length)
  for (const indexes of groups.values()) {
    const group = indexes.map((i) => rows[i]!)
    const answers = group.length === 1 ? [await one(group[0]!)] : await insertMany(pool, group, one)
    answers.forEach((a, k) => (outcomes[indexes[k]!] = a))
  }
  return outcomes
}

async function insertMany(pool: pg.Pool, rows: NewMessage[], one: (m: NewMessage) => Promise<InsertOutcome>): Promise<InsertOutcome[]> {
  const columns: unknown[][] = Array.from({ length: 17 }, () => [])
  for (const m of rows) {
    const [eventId, type, , payload, occurredAt] = outboxRow(m.event)
    const idem = m.idempotency
    const values = [
      m.id,
      m.channelId,
      m.authorId,
      m.authorType,
      m.authorName,
      m.text,
      m.createdAt,
      m.inReplyToEvent,
      m.chainDepth,
      eventId,
      type,
      payload,
      occurredAt,
      idem?.key ?? null,
      idem?.hash ?? null,
      idem ? JSON.stringify(idem.body) : null,
      m.guard?.listening ?? false,
    ]
    values.forEach((v, i) => columns[i]!.push(v))
  }
  const guard = rows[0]!.guard
  try {
    const { rows: results } = await pool.query<ResultRow & { ord: number }>({
      name: guard ? 'post-messages-batch-guarded' : 'post-messages-batch',
      text: guard ? INSERT_MANY_SQL.guarded : INSERT_MANY_SQL.plain,
      values: guard ? [...columns, guard.maxTurns, guard.windowMs] : columns,
    })
    const outcomes: InsertOutcome[] = new Array(rows.length)
    for (const r of results) outcomes[r.ord - 1] = { result: resultOf(r) }
    return outcomes
  } catch (error) {
    // PostgreSQL not answering: that is every post's answer. Retrying each would turn a batch
    // whose outcome is unknown (src/db/commit-guard.ts) into 503s that say nothing was stored.
    if (isDatabaseOutage(error)) return rows.map(() => ({ error }))
    // One bad row (its channel deleted meanwhile, two posts with one Idempotency-Key) fails the
    // whole statement, admissions included: retry them one by one so that each gets its own answer.
    return Promise.all(rows.map(one))
  }
}

const batchers = new WeakMap<pg.Pool, Batcher<NewMessage, InsertOutcome>>()

/**
 * Inserts the message (with its attachment, idempotent response and outbox event) if the author
 * is a member of the channel, no response is remembered for its Idempotency-Key, and the loop
 * guard admits it, all in one statement. Messages without a file, mentions or thread go through
 * a group commit (src/lib/batcher.ts): concurrent posts share one statement.
 */
export async function insertMessage(app: FastifyInstance, m: NewMessage): Promise<InsertResult> {
  const pool = app.db.pool
  // A reply updates its root's row in the same statement: it goes alone (docs/decisions.md, Threads).
  if (m.attachment || m.mentions || m.threadId || m.approval) return insertOne(pool, m)
  let batcher = batchers.get(pool)
  if (!batcher) {
    batcher = new Batcher((rows) => insertBatch(pool, rows), { maxInFlight: 1, maxBatch: 200 })
    batchers.set(pool, batcher)
  }
  const outcome = await batcher.submit(m)
  if ('error' in outcome) throw outcome.error
  return outcome.result
}

async function insertOne(pool: pg.Pool, m: NewMessage): Promise<InsertResult> {
  const values: unknown[] = [m.id, m.channelId, m.authorId, m.authorType, m.authorName, m.text, m.createdAt, m.inReplyToEvent, m.chainDepth, ...outboxRow(m.event)]
  if (m.attachment) values.push(m.attachment.id, m.attachment.fileName, m.attachment.contentType, m.attachment.size, m.attachment.storageName)
  if (m.idempotency) values.push(m.idempotency.key, m.idempotency.hash, JSON.stringify(m.idempotency.body))
  const withMentions = m.mentions ? (m.mentions.event ? 2 : 1) : 0
  if (m.mentions) values.push(m.mentions.ids)
  if (m.mentions?.event) values.push(...outboxRow(m.mentions.event))
  const withAttachment = Boolean(m.attachment)
  const withIdempotency = Boolean(m.idempotency)
  const withThread = Boolean(m.threadId)
  if (withThread) values.push(m.threadId)
  if (m.guard) values.push(m.guard.listening, m.guard.maxTurns, m.guard.windowMs)
  const a = m.approval
  if (a) values.push(a.action, JSON.stringify(a.arguments), a.summary, a.choices, JSON.stringify(a.approvers), a.expiresAt, a.onExpiry, a.digest)
  const { rows } = await pool.query<ResultRow>({
    name: `post-message-${withAttachment}-${withIdempotency}-${withMentions}${withThread ? '-reply' : ''}${m.guard ? '-guarded' : ''}${a ? '-approval' : ''}`,
    text: insertSql(withAttachment, withIdempotency, withMentions, withThread, Boolean(m.guard), Boolean(a)),
    values,
  })
  return resultOf(rows[0]!)
}

const withAttachment = { attachment: { select: { id: true, fileName: true, contentType: true, size: true, storageName: true } }, approval: true } as const

export function findMessage(db: Db, channelId: string, messageId: string) {
  return db.message.findFirst({ where: { id: messageId, channelId }, include: withAttachment })
}

/** The message's approval request, if any (docs/approvals.md): one primary-key probe per row. */
const APPROVAL_COLUMN = '(SELECT to_jsonb(p) FROM approvals p WHERE p.message_id = m.id) AS approval'

// A page of history is one statement (the message and its attachment joined) on the pg pool:
// through Prisma it was two queries and their mapping, about half of the server's time for a page
// (docs/performance.md, "Search at a million messages"). Each cursor shape has its own text so
// that every bound is an index condition on (channel_id, id).
export const PAGE_COLUMNS = `m.id, m.channel_id, m.author_id, m.author_type, m.author_name, m.text, m.created_at, m.edited_at,
       m.in_reply_to_event, m.chain_depth, m.mentions::text[] AS mentions,
       m.thread_id, m.reply_count, m.last_reply_at, m.recent_replier_ids, m.deleted, m.stream_state,
       a.id AS att_id, a.file_name AS att_file_name, a.content_type AS att_content_type, a.size AS att_size,
       ${APPROVAL_COLUMN}`
/** The page statements of one list: a channel's messages, its roots only, or a thread's replies. */
function pageSql(where: string) {
  const from = `SELECT ${PAGE_COLUMNS} FROM messages m LEFT JOIN attachments a ON a.message_id = m.id WHERE ${where}`
  return {
    newest: `${from} ORDER BY m.id DESC LIMIT $2`,
    before: `${from} AND m.id < $3 ORDER BY m.id DESC LIMIT $2`,
    after: `${from} AND m.id > $3 ORDER BY m.id ASC LIMIT $2`,
    between: `${from} AND m.id > $3 AND m.id < $4 ORDER BY m.id ASC LIMIT $2`,
  }
}
const PAGE_SQL = {
  history: pageSql('m.channel_id = $1'),
  roots: pageSql('m.channel_id = $1 AND m.thread_id IS NULL'),
  replies: pageSql('m.thread_id = $1'),
}

interface MessageRow {
  id: string
  channel_id: string
  author_id: string
  author_type: 'AGENT' | 'HUMAN'
  author_name: string
  text: string
  created_at: Date
  edited_at: Date | null
  in_reply_to_event: string | null
  chain_depth: number
  mentions: string[]
  thread_id?: string | null
  reply_count?: number
  last_reply_at?: Date | null
  recent_replier_ids?: string[]
  deleted?: boolean
  stream_state?: string
  att_id: string | null
  att_file_name: string | null
  att_content_type: string | null
  att_size: number | null
  approval?: Record<string, unknown> | null
}

/** A joined message row (history, search) as a MessageRecord. */
export function messageRecord(r: MessageRow): MessageRecord {
  return {
    id: r.id,
    channelId: r.channel_id,
    authorId: r.author_id,
    authorType: r.author_type,
    authorName: r.author_name,
    text: r.text,
    createdAt: r.created_at,
    editedAt: r.edited_at,
    inReplyToEvent: r.in_reply_to_event,
    chainDepth: r.chain_depth,
    mentions: r.mentions,
    threadId: r.thread_id ?? null,
    replyCount: r.reply_count ?? 0,
    lastReplyAt: r.last_reply_at ?? null,
    recentReplierIds: r.recent_replier_ids ?? [],
    deleted: r.deleted ?? false,
    streamState: r.stream_state ?? 'complete',
    attachment: r.att_id ? { id: r.att_id, fileName: r.att_file_name!, contentType: r.att_content_type!, size: r.att_size! } : null,
    approval: r.approval ? approvalRecordOfJson(r.approval) : null,
  }
}

/**
 * A page of messages, newest first; `take` rows (the caller asks for one extra to learn has_more).
 * `list`: the channel's messages (`history`), its roots only, or the replies of the thread whose
 * root is `id` (threads).
 */
export async function listMessages(app: FastifyInstance, id: string, take: number, cursor: { before?: string; after?: string }, list: keyof typeof PAGE_SQL = 'history'): Promise<MessageRecord[]> {
  const query = (name: keyof (typeof PAGE_SQL)['history'], values: unknown[]) => app.db.pool.query<MessageRow>({ name: `${list}-${name}`, text: PAGE_SQL[list][name], values: [id, take, ...values] })
  if (cursor.after) {
    const { rows } = cursor.before ? await query('between', [cursor.after, cursor.before]) : await query('after', [cursor.after])
    return rows.map(messageRecord).reverse()
  }
  const { rows } = cursor.before ? await query('before', [cursor.before]) : await query('newest', [])
  return rows.map(messageRecord)
}

export function updateText(db: Db, id: string, text: string, editedAt: Date, mentions?: string[]) {
  return db.message.update({ where: { id }, data: { text, editedAt, ...(mentions ? { mentions } : {}) }, include: withAttachment })
}

export function deleteMessage(db: Db, id: string) {
  return db.message.delete({ where: { id } })
}

export function findAttachment(db: Db, id: string) {
  return db.attachment.findUnique({ where: { id }, include: { message: { select: { channelId: true } } } })
}

export interface SearchRow extends MessageRow {
  rank: number
  snippet: string
}

// Search ranks the newest matches only (docs/decisions.md, "Search: relevance among the newest
// matches"). Ranking every match made a word found in 1 % of a million messages cost a second of
// PostgreSQL per query (docs/performance.md, "Search at a million messages"). One statement finds
// the newest matches in four parts, read in order until RANKED_MATCHES are found:
//  1-2. The last 2 hours, then the rest of the day, read row by row from the primary key range
//     (ids are UUIDv7: time-ordered): a few thousand rows at most, and a common word stops here.
//  3. The rest of the week: the GIN index ANDed with the primary key range.
//  4. Everything older, for a word rare enough to leave the week short: the GIN index alone
//     gives the candidates (the bound is applied after it, so the planner does not build a bitmap
//     of a year of primary keys for ten matches).
// Each part is fenced (OFFSET 0): given ORDER BY id DESC LIMIT, the planner bets on a backward
// scan of the primary key, which reads the whole table when it overestimates the matches (a
// phrase: 3.4 s at a million messages). The parts are the branches of a UNION ALL under a LIMIT:
// PostgreSQL runs the branches of an Append in order and stops pulling once the LIMIT is met, so
// a later part costs nothing when an earlier one was enough. A part that runs decodes the posting
// lists of the query's words again: two of them at most.

/** How many of the newest matches are ranked; results are the best `limit` of them. */
export const RANKED_MATCHES = 200
const RECENT_SLICES_MS = [2 * 3_600_000, 86_400_000, 7 * 86_400_000]

/** The smallest UUIDv7 of a millisecond: the lower bound of the ids posted from then on. */
function firstIdAt(ms: number): string {
  const hex = Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-0000-0000-000000000000`
}

/** The channels a search covers: the caller's channels and DMs, and every regular channel for the owner. */
export async function searchScope(app: FastifyInstance, memberId: string, allRegularChannels: boolean): Promise<string[]> {
  const { rows } = await app.db.pool.query<{ id: string }>(
    `SELECT channel_id AS id FROM channel_members WHERE member_id = $1
     UNION SELECT id FROM channels WHERE $2::boolean AND type = 'channel'`,
    [memberId, allRegularChannels],
  )
  return rows.map((r) => r.id)
}

// A part of the search: its matches, newest first. `match` is how the text is matched: `@@`, which
// the GIN index serves, or its function ts_match_vq, which no index serves, for the small recent
// slices that are cheaper to read row by row than to decode a common word's whole posting list.
const part = (match: '@@' | 'ts_match_vq', bounds: string, after = '') => {
  const matches = match === '@@' ? "m.search @@ websearch_to_tsquery('english', $1)" : "ts_match_vq(m.search, websearch_to_tsquery('english', $1))"
  return `(
      SELECT id, rank FROM (
        SELECT m.id, ts_rank(m.search, websearch_to_tsquery('english', $1))::float8 AS rank FROM messages m
         WHERE ${matches} AND m.channel_id = ANY($2::uuid[])${bounds}
        OFFSET 0) s${after}
       ORDER BY id DESC)`
}

// $1 the query text, $2 the scope, $3-$5 the lower bounds of the slices, $6 RANKED_MATCHES,
// $7 the page size. The hits carry their attachment and a snippet built from HTML-escaped text
// (the only markup in it is our <mark> tags). A text of at most SNIPPET_WORDS words is its own
// snippet, whole: ts_headline's fragments cut emoji and the last word off short texts
// ("🎉 deploy done 🚀" gave "deploy done"); a longer one is cut into fragments around the matches.
const SNIPPET_WORDS = 30
const SEARCH_SQL = `
  WITH newest AS (
    SELECT id, rank FROM (
      ${part('ts_match_vq', ' AND m.id >= $3::uuid')}
      UNION ALL ${part('ts_match_vq', ' AND m.id >= $4::uuid AND m.id < $3::uuid')}
      UNION ALL ${part('@@', ' AND m.id >= $5::uuid AND m.id < $4::uuid')}
      UNION ALL ${part('@@', '', ' WHERE id < $5::uuid')}
    ) matches
    LIMIT $6)
  SELECT m.id, m.channel_id, m.author_id, m.author_type, m.author_name, m.text, m.created_at, m.edited_at,
         m.in_reply_to_event, m.chain_depth, m.mentions::text[] AS mentions,
         m.thread_id, m.reply_count, m.last_reply_at, m.recent_replier_ids, m.deleted, m.stream_state,
         a.id AS att_id, a.file_name AS att_file_name, a.content_type AS att_content_type, a.size AS att_size,
         ${APPROVAL_COLUMN},
         n.rank,
         ts_headline('english',
           replace(replace(replace(m.text, '&', '&amp;'), '<', '&lt;'), '>', '&gt;'),
           websearch_to_tsquery('english', $1),
           CASE WHEN cardinality(regexp_split_to_array(btrim(m.text), '\\s+')) <= ${SNIPPET_WORDS}
                THEN 'StartSel=<mark>, StopSel=</mark>, HighlightAll=true'
                ELSE 'StartSel=<mark>, StopSel=</mark>, MaxWords=${SNIPPET_WORDS}, MinWords=10, MaxFragments=2, FragmentDelimiter=" … "' END) AS snippet
    FROM newest n
    JOIN messages m ON m.id = n.id
    LEFT JOIN attachments a ON a.message_id = m.id
   ORDER BY n.rank DESC, m.id DESC
   LIMIT $7`

/**
 * PostgreSQL's full-text search over the generated `search` column (GIN index): the best `limit`
 * of the newest RANKED_MATCHES matches in the given channels by `ts_rank`, newest first among
 * equals.
 */
export const postgresSearch: SearchEngine = {
  async search(app, request) {
    const { rows } = await app.db.pool.query<SearchRow>(searchStatement(request.text, request.channelIds, request.limit))
    return rows
  },
}

/** The search statement and its values (also used by scripts/bench/history.ts to show its plans). */
export function searchStatement(text: string, scope: string[], limit: number, now = Date.now()): { text: string; values: unknown[] } {
  const bounds = RECENT_SLICES_MS.map((span) => firstIdAt(now - span))
  return { text: SEARCH_SQL, values: [text, scope, ...bounds, RANKED_MATCHES, limit] }
}

// ---- threads: what a reply names, and deletions that keep a thread readable ----

/** The message a post's thread_id names, if it is in this channel: its own thread_id tells a root (null) from a reply. */
export async function findThreadTarget(pool: pg.Pool, channelId: string, messageId: string): Promise<{ threadId: string | null } | null> {
  const { rows } = await pool.query<{ thread_id: string | null }>({
    name: 'thread-target',
    text: 'SELECT thread_id FROM messages WHERE id = $1 AND channel_id = $2',
    values: [messageId, channelId],
  })
  return rows[0] ? { threadId: rows[0].thread_id } : null
}

export type Removal =
  | { kind: 'gone' } // deleted meanwhile
  | { kind: 'deleted'; rootRemoved: boolean } // rootRemoved: the reply was the last of a deleted root, which went too
  | { kind: 'placeholder' } // a root with replies: kept, empty, without its file

/**
 * Deletes a message in a transaction. A root with replies becomes a placeholder (deleted, empty
 * text, no file) so that its thread stays readable; a reply is removed and its root's summary
 * recounted, and a placeholder root whose last reply goes is removed too. The root's row is
 * locked first, as a reply's insert locks it, so the summary cannot miss a concurrent reply.
 */
export async function removeMessage(tx: Prisma.TransactionClient, m: { id: string; threadId: string | null }): Promise<Removal> {
  const rootId = m.threadId ?? m.id
  const locked = await tx.$queryRaw<{ reply_count: number }[]>`SELECT reply_count FROM messages WHERE id = ${rootId}::uuid FOR UPDATE`
  if (!m.threadId) {
    if (!locked.length) return { kind: 'gone' }
    if (locked[0]!.reply_count > 0) {
      await tx.$executeRaw`UPDATE messages SET text = '', deleted = true WHERE id = ${m.id}::uuid`
      await tx.$executeRaw`DELETE FROM attachments WHERE message_id = ${m.id}::uuid`
      return { kind: 'placeholder' }
    }
    await tx.$executeRaw`DELETE FROM messages WHERE id = ${m.id}::uuid`
    return { kind: 'deleted', rootRemoved: false }
  }
  const removed = await tx.$executeRaw`DELETE FROM messages WHERE id = ${m.id}::uuid`
  if (removed === 0) return { kind: 'gone' }
  const [root] = await tx.$queryRaw<{ deleted: boolean; reply_count: number }[]>`
    UPDATE messages r
       SET reply_count = s.n, last_reply_at = s.last, recent_replier_ids = s.recent
      FROM (SELECT count(*)::int AS n, max(created_at) AS last,
                   coalesce((SELECT array_agg(author_id ORDER BY newest DESC) FROM (
                      SELECT author_id, max(id::text) AS newest FROM messages WHERE thread_id = ${rootId}::uuid
                       GROUP BY author_id ORDER BY max(id::text) DESC LIMIT 3) x), '{}') AS recent
              FROM messages WHERE thread_id = ${rootId}::uuid) s
     WHERE r.id = ${rootId}::uuid
    RETURNING r.deleted, r.reply_count`
  if (root?.deleted && root.reply_count === 0) {
    await tx.$executeRaw`DELETE FROM messages WHERE id = ${rootId}::uuid`
    return { kind: 'deleted', rootRemoved: true }
  }
  return { kind: 'deleted', rootRemoved: false }
}

// ---- the chain cap (src/modules/messages/loop-guard.ts; the turn limit is in the insert above) ----

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

// ---- mentions (GET /api/v1/mentions) ----

/**
 * The messages of `channelIds` that mention `memberId`, newest first: `take` of them older than
 * the message `before` (when given) and posted after `since` (when given).
 */
export async function mentionsOf(app: FastifyInstance, memberId: string, channelIds: string[], page: { take: number; before?: string; since?: Date }): Promise<MessageRecord[]> {
  const { rows } = await app.db.pool.query<Parameters<typeof messageRecord>[0]>({
    name: 'mentions-of-member',
    text: `SELECT ${PAGE_COLUMNS} FROM messages m LEFT JOIN attachments a ON a.message_id = m.id
            WHERE m.mentions @> ARRAY[$1::uuid] AND m.channel_id = ANY($2::uuid[])
              AND ($3::uuid IS NULL OR m.id < $3::uuid)
              AND ($4::timestamptz IS NULL OR m.created_at > $4::timestamptz)
            ORDER BY m.id DESC LIMIT $5`,
    values: [memberId, channelIds, page.before ?? null, page.since ?? null, page.take],
  })
  return rows.map(messageRecord)
}
