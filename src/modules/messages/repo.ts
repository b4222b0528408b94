// Messages and their attachments. Posting is the hot path: one raw SQL statement inserts the
// message, its attachment, the remembered idempotent response and the outbox event atomically
// (docs/decisions.md, Conversations). Reads and edits go through Prisma.
import type { FastifyInstance } from 'fastify'
import type pg from 'pg'
import type { Prisma, PrismaClient } from '../../db/client.ts'
import { outboxRow } from '../../events/bus.ts'
import { Batcher } from '../../lib/batcher.ts'
import { isDatabaseOutage } from '../../lib/outage.ts'
import type { DomainEvent } from '../../events/types.ts'
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
  idempotency?: { key: string; hash: string; body: unknown }
  event: DomainEvent<'message.created'>
  /** Mentioned member ids and the message.mentioned event, when it mentions anyone (not batched). */
  mentions?: { ids: string[]; event: DomainEvent<'message.mentioned'> | null }
}

const sqlCache = new Map<string, string>()

function insertSql(withAttachment: boolean, withIdempotency: boolean, withMentions = 0, withThread = false): string {
  const cacheKey = `${withAttachment}:${withIdempotency}:${withMentions}:${withThread}`
  let sql = sqlCache.get(cacheKey)
  if (sql) return sql
  // $1..$9 message, $10..$14 outbox, $15..$19 attachment, $20..$22 idempotency, then mentions:
  // the ids, and (withMentions 2) the message.mentioned outbox row; then the thread's root.
  const m = 15 + (withAttachment ? 5 : 0) + (withIdempotency ? 3 : 0)
  const root = m + (withMentions ? 1 : 0) + (withMentions === 2 ? 5 : 0)
  const parts = [
    `WITH ${withThread ? rootSummaryCte(root) : ''}msg AS (
       INSERT INTO messages (id, channel_id, author_id, author_type, author_name, text, created_at, in_reply_to_event, chain_depth${withMentions ? ', mentions' : ''}${withThread ? ', thread_id' : ''})
       SELECT $1, $2, $3, $4::actor_type, $5, $6, $7, $8::uuid, $9::int${withMentions ? `, $${m}::uuid[]` : ''}${withThread ? ', (SELECT id FROM root)' : ''}
        WHERE ${withThread ? 'EXISTS (SELECT 1 FROM root)' : 'EXISTS (SELECT 1 FROM channel_members WHERE channel_id = $2 AND member_id = $3)'}
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
    const n = withAttachment ? 20 : 15
    parts.push(`, idem AS (
       INSERT INTO idempotency_keys (principal_id, key, request_hash, status_code, response_body, created_at)
       SELECT $3, $${n}, $${n + 1}, 201, $${n + 2}::jsonb, $7 FROM msg
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
  parts.push(' SELECT count(*)::int AS inserted FROM msg')
  sql = parts.join('')
  sqlCache.set(cacheKey, sql)
  return sql
}

// ---- threads: a reply and its root's summary in one statement ----
/**
 * The root's summary, updated under its row lock by the statement that inserts a reply:
 * reply_count, last_reply_at, recent_replier_ids (the author first, then the previous ones
 * without it, three at most). The reply is inserted only if the root was updated: it exists, is
 * in this channel, is not itself a reply, and the author is a member; a root deleted meanwhile
 * inserts nothing.
 */
function rootSummaryCte(param: number): string {
  return `root AS (
       UPDATE messages r
          SET reply_count = r.reply_count + 1,
              last_reply_at = greatest(r.last_reply_at, $7),
              recent_replier_ids = (
                SELECT array_agg(x ORDER BY o) FROM (
                  SELECT x, min(o) AS o FROM unnest(ARRAY[$3::uuid] || r.recent_replier_ids) WITH ORDINALITY AS u(x, o)
                   GROUP BY x ORDER BY min(o) LIMIT 3) s)
        WHERE r.id = $${param}::uuid AND r.channel_id = $2 AND r.thread_id IS NULL
          AND EXISTS (SELECT 1 FROM channel_members WHERE channel_id = $2 AND member_id = $3)
       RETURNING r.id
     ), `
}
// ---- end threads ----

// Many plain messages (no file, no Idempotency-Key) in one statement: each row is inserted, with
// its outbox event, only if its author is a member of its channel. Returns the ids inserted.
const INSERT_MANY_SQL = `
  WITH input AS (
    SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::actor_type[], $5::text[], $6::text[], $7::timestamptz[],
                         $8::uuid[], $9::int[], $10::uuid[], $11::text[], $12::jsonb[], $13::timestamptz[])
      WITH ORDINALITY AS t(id, channel_id, author_id, author_type, author_name, text, created_at, in_reply_to_event, chain_depth,
                           event_id, type, payload, occurred_at, ord)
  ), ok AS (
    SELECT * FROM input i WHERE EXISTS (SELECT 1 FROM channel_members m WHERE m.channel_id = i.channel_id AND m.member_id = i.author_id)
  ), msg AS (
    INSERT INTO messages (id, channel_id, author_id, author_type, author_name, text, created_at, in_reply_to_event, chain_depth)
    SELECT id, channel_id, author_id, author_type, author_name, text, created_at, in_reply_to_event, chain_depth FROM ok ORDER BY ord
    RETURNING id
  ), ob AS (
    INSERT INTO outbox_events (event_id, type, channel_id, payload, occurred_at)
    SELECT event_id, type, channel_id, payload, occurred_at FROM ok ORDER BY ord
    RETURNING 1
  )
  SELECT id::text FROM msg`

type InsertOutcome = { inserted: boolean } | { error: unknown }

async function insertPlainMessages(pool: pg.Pool, rows: NewMessage[]): Promise<InsertOutcome[]> {
  const one = (m: NewMessage): Promise<InsertOutcome> =>
    insertOne(pool, m).then(
      (inserted) => ({ inserted }),
      (error: unknown) => ({ error }),
    )
  if (rows.length === 1) return [await one(rows[0]!)]
  const columns: unknown[][] = Array.from({ length: 13 }, () => [])
  for (const m of rows) {
    const [eventId, type, , payload, occurredAt] = outboxRow(m.event)
    const values = [m.id, m.channelId, m.authorId, m.authorType, m.authorName, m.text, m.createdAt, m.inReplyToEvent, m.chainDepth, eventId, type, payload, occurredAt]
    values.forEach((v, i) => columns[i]!.push(v))
  }
  try {
    const { rows: inserted } = await pool.query<{ id: string }>({ name: 'post-messages-batch', text: INSERT_MANY_SQL, values: columns })
    const ids = new Set(inserted.map((r) => r.id))
    return rows.map((m) => ({ inserted: ids.has(m.id) }))
  } catch (error) {
    // PostgreSQL not answering: that is every post's answer. Retrying each would turn a batch
    // whose outcome is unknown (src/db/commit-guard.ts) into 503s that say nothing was stored.
    if (isDatabaseOutage(error)) return rows.map(() => ({ error }))
    // One bad row (its channel deleted meanwhile) fails the whole statement: retry them one by
    // one so that each request gets its own answer.
    return Promise.all(rows.map(one))
  }
}

const batchers = new WeakMap<pg.Pool, Batcher<NewMessage, InsertOutcome>>()

/**
 * Inserts the message (with its attachment, idempotent response and outbox event) if the author
 * is a member of the channel. Returns false when the author is not a member (nothing stored).
 * Plain messages go through a group commit (src/lib/batcher.ts): concurrent posts share one
 * statement.
 */
export async function insertMessage(app: FastifyInstance, m: NewMessage): Promise<boolean> {
  const pool = app.db.pool
  // A reply updates its root's row in the same statement: it goes alone (docs/decisions.md, Threads).
  if (m.attachment || m.idempotency || m.mentions || m.threadId) return insertOne(pool, m)
  let batcher = batchers.get(pool)
  if (!batcher) {
    batcher = new Batcher((rows) => insertPlainMessages(pool, rows), { maxInFlight: 1, maxBatch: 200 })
    batchers.set(pool, batcher)
  }
  const outcome = await batcher.submit(m)
  if ('error' in outcome) throw outcome.error
  return outcome.inserted
}

async function insertOne(pool: pg.Pool, m: NewMessage): Promise<boolean> {
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
  const { rows } = await pool.query<{ inserted: number }>({
    name: `post-message-${withAttachment}-${withIdempotency}-${withMentions}${withThread ? '-reply' : ''}`,
    text: insertSql(withAttachment, withIdempotency, withMentions, withThread),
    values,
  })
  return rows[0]!.inserted === 1
}

const withAttachment = { attachment: { select: { id: true, fileName: true, contentType: true, size: true, storageName: true } } } as const

export function findMessage(db: Db, channelId: string, messageId: string) {
  return db.message.findFirst({ where: { id: messageId, channelId }, include: withAttachment })
}

// A page of history is one statement (the message and its attachment joined) on the pg pool:
// through Prisma it was two queries and their mapping, about half of the server's time for a page
// (docs/performance.md, "Search at a million messages"). Each cursor shape has its own text so
// that every bound is an index condition on (channel_id, id).
export const PAGE_COLUMNS = `m.id, m.channel_id, m.author_id, m.author_type, m.author_name, m.text, m.created_at, m.edited_at,
       m.in_reply_to_event, m.chain_depth, m.mentions::text[] AS mentions,
       m.thread_id, m.reply_count, m.last_reply_at, m.recent_replier_ids, m.deleted,
       a.id AS att_id, a.file_name AS att_file_name, a.content_type AS att_content_type, a.size AS att_size`
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
  att_id: string | null
  att_file_name: string | null
  att_content_type: string | null
  att_size: number | null
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
    attachment: r.att_id ? { id: r.att_id, fileName: r.att_file_name!, contentType: r.att_content_type!, size: r.att_size! } : null,
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
         m.thread_id, m.reply_count, m.last_reply_at, m.recent_replier_ids, m.deleted,
         a.id AS att_id, a.file_name AS att_file_name, a.content_type AS att_content_type, a.size AS att_size,
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

// ---- the loop guard (src/modules/messages/loop-guard.ts) ----

/** The nil UUID stands for "the channel itself, not a thread" in loop_guards.thread_id. */
export const NO_THREAD = '00000000-0000-0000-0000-000000000000'

export interface LoopGuardAdmission {
  channelId: string
  threadId: string | null
  authorId: string
  at: Date
  maxMessages: number
  windowMs: number
}

export type LoopGuardOutcome = { admitted: true; recorded: boolean } | { admitted: false; retryAt: Date }

/**
 * Admits agent messages into their conversations (loop_guard_admit_many,
 * prisma/migrations/…_loop_guard_batched), many per statement: concurrent posts to one busy
 * channel take its row lock once per batch instead of once each. An admitted message has its
 * time recorded; an author who is not a member is admitted with nothing recorded (the post then
 * answers for itself); a refusal says when the next agent message will be admitted.
 */
export function admitAgentMessage(pool: pg.Pool, g: LoopGuardAdmission): Promise<LoopGuardOutcome> {
  let batcher = admissionBatchers.get(pool)
  if (!batcher) {
    // Batches run concurrently (other conversations need not wait); the function locks each
    // conversation's row in one order, so two batches never deadlock.
    batcher = new Batcher((items) => admitMany(pool, items), { maxInFlight: 4, maxBatch: 200 })
    admissionBatchers.set(pool, batcher)
  }
  return batcher.submit(g)
}

const admissionBatchers = new WeakMap<pg.Pool, Batcher<LoopGuardAdmission, LoopGuardOutcome>>()

async function admitMany(pool: pg.Pool, items: LoopGuardAdmission[]): Promise<LoopGuardOutcome[]> {
  // One statement per (max, window): the settings are the same for every item but for the few
  // seconds after a change.
  const groups = new Map<string, number[]>()
  items.forEach((item, i) => {
    const key = `${item.maxMessages}/${item.windowMs}`
    groups.set(key, [...(groups.get(key) ?? []), i])
  })
  const outcomes: LoopGuardOutcome[] = new Array(items.length)
  for (const indexes of groups.values()) {
    const group = indexes.map((i) => items[i]!)
    const { rows } = await pool.query<{ ord: number; next: Date | null; member: boolean }>({
      name: 'loop-guard-admit-many',
      text: `SELECT ord, next, next IS NULL OR next <> '-infinity'::timestamptz AS member
               FROM loop_guard_admit_many($1::uuid[], $2::uuid[], $3::uuid[], $4::timestamptz[], $5::int, $6::int)`,
      values: [group.map((g) => g.channelId), group.map((g) => g.threadId ?? NO_THREAD), group.map((g) => g.authorId), group.map((g) => g.at), group[0]!.maxMessages, group[0]!.windowMs],
    })
    for (const { ord, next, member } of rows) {
      outcomes[indexes[ord - 1]!] = next === null ? { admitted: true, recorded: true } : !member ? { admitted: true, recorded: false } : { admitted: false, retryAt: next }
    }
  }
  return outcomes
}

/** Takes back one admission whose message was not stored after all. */
export async function releaseAgentMessage(pool: pg.Pool, g: { channelId: string; threadId: string | null; at: Date }): Promise<void> {
  await pool.query({
    name: 'loop-guard-release',
    text: `UPDATE loop_guards
              SET stamps = stamps[:array_position(stamps, $3::timestamptz) - 1] || stamps[array_position(stamps, $3::timestamptz) + 1:]
            WHERE channel_id = $1 AND thread_id = $2 AND $3::timestamptz = ANY(stamps)`,
    values: [g.channelId, g.threadId ?? NO_THREAD, g.at],
  })
}

/** A human spoke: the agents' count in that conversation starts over. */
export async function resetLoopGuard(pool: pg.Pool, g: { channelId: string; threadId: string | null }): Promise<void> {
  await pool.query({
    name: 'loop-guard-reset',
    text: `UPDATE loop_guards SET stamps = '{}' WHERE channel_id = $1 AND thread_id = $2 AND cardinality(stamps) > 0`,
    values: [g.channelId, g.threadId ?? NO_THREAD],
  })
}

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
