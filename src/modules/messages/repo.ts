// Messages and their attachments. Posting is the hot path: one raw SQL statement inserts the
// message, its attachment, the remembered idempotent response and the outbox event atomically
// (docs/decisions.md, Conversations), and in the same statement looks the Idempotency-Key up and
// runs the loop guard's admission (docs/loops.md, SQL in ./loop-guard-repo.ts). Every read of the
// API's shape (pages, mentions, a single message, an edit's result) goes through the read model
// (./read-model.ts); search is ./search-repo.ts.
import type { ServiceContext } from '../context.ts'
import type pg from 'pg'
import type { Prisma, PrismaClient } from '../../db/client.ts'
import { outboxPayload, outboxRow } from '../../events/bus.ts'
import { Batcher } from '../../lib/batcher.ts'
import { isDatabaseOutage } from '../../lib/outage.ts'
import type { DomainEvent } from '../../events/types.ts'
import type { ApprovalRecord } from '../../schemas/approval.ts'
import type { MessageRecord } from '../../schemas/message.ts'
import { admitManyCtes, admitOneCtes, type GuardParams } from './loop-guard-repo.ts'
import { MESSAGE_IN_CHANNEL, messageRecord, selectMessages, type MessageRow, type StoredMessage } from './read-model.ts'

type Db = PrismaClient | Prisma.TransactionClient

/** A message to insert: the record's own fields, then what the insert statement also does. */
export interface NewMessage extends Pick<MessageRecord, 'id' | 'channelId' | 'authorId' | 'authorType' | 'authorName' | 'text' | 'createdAt' | 'inReplyToEvent' | 'chainDepth'> {
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
    -- The rows as one JSON array: one native JSON.stringify instead of seventeen array literals
    -- escaped element by element in JavaScript (the message text and event payload twice).
    SELECT * FROM json_to_recordset($1::json)
      AS t(id uuid, channel_id uuid, author_id uuid, author_type actor_type, author_name text, text text, created_at timestamptz,
           in_reply_to_event uuid, chain_depth int, event_id uuid, type text, payload jsonb, occurred_at timestamptz,
           idem_key text, idem_hash text, idem_body jsonb, listening boolean, ord int)
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
    // The guard (docs/loops.md, ./loop-guard-repo.ts): it admits or refuses each row of `mem`.
    withGuard ? `, ${admitManyCtes(2, 3)}` : ''
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
  const input = rows.map((m, i) => ({
    id: m.id,
    channel_id: m.channelId,
    author_id: m.authorId,
    author_type: m.authorType,
    author_name: m.authorName,
    text: m.text,
    created_at: m.createdAt,
    in_reply_to_event: m.inReplyToEvent,
    chain_depth: m.chainDepth,
    event_id: m.event.id,
    type: m.event.type,
    payload: outboxPayload(m.event),
    occurred_at: m.event.occurredAt,
    idem_key: m.idempotency?.key ?? null,
    idem_hash: m.idempotency?.hash ?? null,
    idem_body: m.idempotency?.body ?? null,
    listening: m.guard?.listening ?? false,
    ord: i + 1,
  }))
  const json = JSON.stringify(input)
  const guard = rows[0]!.guard
  try {
    const { rows: results } = await pool.query<ResultRow & { ord: number }>({
      name: guard ? 'post-messages-batch-guarded' : 'post-messages-batch',
      text: guard ? INSERT_MANY_SQL.guarded : INSERT_MANY_SQL.plain,
      values: guard ? [json, guard.maxTurns, guard.windowMs] : [json],
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
export async function insertMessage(ctx: ServiceContext, m: NewMessage): Promise<InsertResult> {
  const pool = ctx.db.pool
  // A reply updates its root's row in the same statement: it goes alone (docs/decisions.md, Threads).
  if (m.attachment || m.mentions || m.threadId || m.approval) return insertOne(pool, m)
  let batcher = batchers.get(pool)
  if (!batcher) {
    batcher = new Batcher((rows) => insertBatch(pool, rows), { maxInFlight: 1, maxBatch: 200, minIntervalMs: ctx.config.groupCommitIntervalMs })
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

// ---- reads and edits: the read model's columns and mapping (./read-model.ts) ----

// Each cursor shape of a page has its own text, so that every bound is an index condition on
// (channel_id, id) or (thread_id, id).
/** The page statements of one list: a channel's messages, its roots only, or a thread's replies. */
function pageSql(where: string) {
  const from = selectMessages(where)
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

/**
 * A page of messages, newest first; `take` rows (the caller asks for one extra to learn has_more).
 * `list`: the channel's messages (`history`), its roots only, or the replies of the thread whose
 * root is `id` (threads).
 */
export async function listMessages(ctx: ServiceContext, id: string, take: number, cursor: { before?: string; after?: string }, list: keyof typeof PAGE_SQL = 'history'): Promise<MessageRecord[]> {
  const query = (name: keyof (typeof PAGE_SQL)['history'], values: unknown[]) => ctx.db.pool.query<MessageRow>({ name: `${list}-${name}`, text: PAGE_SQL[list][name], values: [id, take, ...values] })
  if (cursor.after) {
    const { rows } = cursor.before ? await query('between', [cursor.after, cursor.before]) : await query('after', [cursor.after])
    return rows.map(messageRecord).reverse()
  }
  const { rows } = cursor.before ? await query('before', [cursor.before]) : await query('newest', [])
  return rows.map(messageRecord)
}

/** A message of this channel, with its attachment (and the file's storage name) and approval. */
export async function findMessage(pool: pg.Pool, channelId: string, messageId: string): Promise<StoredMessage | null> {
  const { rows } = await pool.query<MessageRow>({ ...MESSAGE_IN_CHANNEL, values: [messageId, channelId] })
  return rows[0] ? messageRecord(rows[0]) : null
}

// The edit and its result in one statement: the result is read by the read model from the
// updated row (a CTE named `m`, as the columns expect).
const UPDATE_TEXT_SQL = `WITH m AS (
    UPDATE messages SET text = $2, edited_at = $3::timestamptz, mentions = coalesce($4::uuid[], mentions) WHERE id = $1::uuid RETURNING *
  ) ${selectMessages('true', 'm')}`

/** Sets the text (and the mentions, when given); the message as edited, or null when it is gone. */
export async function updateText(tx: Prisma.TransactionClient, id: string, text: string, editedAt: Date, mentions?: string[]): Promise<StoredMessage | null> {
  const [row] = await tx.$queryRawUnsafe<MessageRow[]>(UPDATE_TEXT_SQL, id, text, editedAt, mentions ?? null)
  return row ? messageRecord(row) : null
}

export function findAttachment(db: Db, id: string) {
  return db.attachment.findUnique({ where: { id }, include: { message: { select: { channelId: true } } } })
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

// ---- mentions (GET /api/v1/mentions) ----

/**
 * The messages of `channelIds` that mention `memberId`, newest first: `take` of them older than
 * the message `before` (when given) and posted after `since` (when given).
 */
export async function mentionsOf(ctx: ServiceContext, memberId: string, channelIds: string[], page: { take: number; before?: string; since?: Date }): Promise<MessageRecord[]> {
  const { rows } = await ctx.db.pool.query<MessageRow>({
    name: 'mentions-of-member',
    text: `${selectMessages(`m.mentions @> ARRAY[$1::uuid] AND m.channel_id = ANY($2::uuid[])
              AND ($3::uuid IS NULL OR m.id < $3::uuid)
              AND ($4::timestamptz IS NULL OR m.created_at > $4::timestamptz)`)}
            ORDER BY m.id DESC LIMIT $5`,
    values: [memberId, channelIds, page.before ?? null, page.since ?? null, page.take],
  })
  return rows.map(messageRecord)
}
