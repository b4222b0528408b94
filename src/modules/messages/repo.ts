// Messages and their attachments. Posting is the hot path: one raw SQL statement inserts the
// message, its attachment, the remembered idempotent response and the outbox event atomically
// (docs/decisions.md, Conversations). Reads and edits go through Prisma.
import type { FastifyInstance } from 'fastify'
import type pg from 'pg'
import type { Prisma, PrismaClient } from '../../db/client.ts'
import { outboxRow } from '../../events/bus.ts'
import { Batcher } from '../../lib/batcher.ts'
import type { DomainEvent } from '../../events/types.ts'
import type { MessageRecord } from './schemas.ts'

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
  attachment?: { id: string; fileName: string; contentType: string; size: number; storageName: string }
  idempotency?: { key: string; hash: string; body: unknown }
  event: DomainEvent
}

const sqlCache = new Map<string, string>()

function insertSql(withAttachment: boolean, withIdempotency: boolean): string {
  const cacheKey = `${withAttachment}:${withIdempotency}`
  let sql = sqlCache.get(cacheKey)
  if (sql) return sql
  // $1..$9 message, $10..$14 outbox, $15..$19 attachment, $20..$22 idempotency
  const parts = [
    `WITH msg AS (
       INSERT INTO messages (id, channel_id, author_id, author_type, author_name, text, created_at, in_reply_to_event, chain_depth)
       SELECT $1, $2, $3, $4::actor_type, $5, $6, $7, $8::uuid, $9::int
        WHERE EXISTS (SELECT 1 FROM channel_members WHERE channel_id = $2 AND member_id = $3)
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
  parts.push(' SELECT count(*)::int AS inserted FROM msg')
  sql = parts.join('')
  sqlCache.set(cacheKey, sql)
  return sql
}

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
  const one = (m: NewMessage): Promise<InsertOutcome> => insertOne(pool, m).then((inserted) => ({ inserted }), (error: unknown) => ({ error }))
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
  } catch {
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
  if (m.attachment || m.idempotency) return insertOne(pool, m)
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
  const withAttachment = Boolean(m.attachment)
  const withIdempotency = Boolean(m.idempotency)
  const { rows } = await pool.query<{ inserted: number }>({
    name: `post-message-${withAttachment}-${withIdempotency}`,
    text: insertSql(withAttachment, withIdempotency),
    values,
  })
  return rows[0]!.inserted === 1
}

const withAttachment = { attachment: { select: { id: true, fileName: true, contentType: true, size: true, storageName: true } } } as const

export function findMessage(db: Db, channelId: string, messageId: string) {
  return db.message.findFirst({ where: { id: messageId, channelId }, include: withAttachment })
}

/** A page of messages, newest first; `take` rows (the caller asks for one extra to learn has_more). */
export async function listMessages(db: Db, channelId: string, take: number, cursor: { before?: string; after?: string }): Promise<MessageRecord[]> {
  if (cursor.after) {
    const rows = await db.message.findMany({
      where: { channelId, id: { gt: cursor.after, ...(cursor.before ? { lt: cursor.before } : {}) } },
      orderBy: { id: 'asc' },
      take,
      include: withAttachment,
    })
    return rows.reverse()
  }
  return db.message.findMany({
    where: { channelId, ...(cursor.before ? { id: { lt: cursor.before } } : {}) },
    orderBy: { id: 'desc' },
    take,
    include: withAttachment,
  })
}

export function updateText(db: Db, id: string, text: string, editedAt: Date) {
  return db.message.update({ where: { id }, data: { text, editedAt }, include: withAttachment })
}

export function deleteMessage(db: Db, id: string) {
  return db.message.delete({ where: { id } })
}

export function findAttachment(db: Db, id: string) {
  return db.attachment.findUnique({ where: { id }, include: { message: { select: { channelId: true } } } })
}

export interface SearchRow {
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
  att_id: string | null
  att_file_name: string | null
  att_content_type: string | null
  att_size: number | null
  rank: number
  snippet: string
}

/**
 * Full-text search over the generated `search` column (GIN index) in every channel the caller may
 * read: those it belongs to and, with `allRegularChannels` (the workspace owner), every regular
 * channel too; never other people's DMs (docs/access.md). The snippet is built from HTML-escaped
 * text, so the only markup in it is our <mark> tags.
 */
export async function searchMessages(
  app: FastifyInstance,
  q: { text: string; memberId: string; allRegularChannels: boolean; channelId?: string; limit: number },
): Promise<SearchRow[]> {
  const { rows } = await app.db.pool.query<SearchRow>(
    `SELECT m.id, m.channel_id, m.author_id, m.author_type, m.author_name, m.text, m.created_at, m.edited_at,
            m.in_reply_to_event, m.chain_depth,
            a.id AS att_id, a.file_name AS att_file_name, a.content_type AS att_content_type, a.size AS att_size,
            ts_rank(m.search, q.query)::float8 AS rank,
            ts_headline('english',
              replace(replace(replace(m.text, '&', '&amp;'), '<', '&lt;'), '>', '&gt;'),
              q.query, 'StartSel=<mark>, StopSel=</mark>, MaxWords=30, MinWords=10, MaxFragments=2, FragmentDelimiter=" … "') AS snippet
       FROM messages m
       CROSS JOIN websearch_to_tsquery('english', $1) AS q(query)
       LEFT JOIN attachments a ON a.message_id = m.id
      WHERE m.search @@ q.query
        AND ($3::uuid IS NULL OR m.channel_id = $3)
        AND (m.channel_id IN (SELECT channel_id FROM channel_members WHERE member_id = $2)
             OR ($5::boolean AND m.channel_id IN (SELECT id FROM channels WHERE type = 'channel')))
      ORDER BY rank DESC, m.id DESC
      LIMIT $4`,
    [q.text, q.memberId, q.channelId ?? null, q.limit, q.allRegularChannels],
  )
  return rows
}

// ---- the loop guard (src/modules/messages/loop-guard.ts) ----

/** The nil UUID stands for "the channel itself, not a thread" in loop_guards.thread_id. */
export const NO_THREAD = '00000000-0000-0000-0000-000000000000'

/**
 * Admits one agent message into a conversation (loop_guard_admit, prisma/migrations/…_loop_protection):
 * null when admitted (its time recorded), else when the next agent message will be. Also null,
 * with nothing recorded, when the author is not a member: the post then answers for itself.
 */
export async function admitAgentMessage(
  pool: pg.Pool,
  g: { channelId: string; threadId: string | null; authorId: string; at: Date; maxMessages: number; windowMs: number },
): Promise<{ admitted: true; recorded: boolean } | { admitted: false; retryAt: Date }> {
  const { rows } = await pool.query<{ next: Date | null; member: boolean }>({
    name: 'loop-guard-admit',
    text: `SELECT next, next IS NULL OR next <> '-infinity'::timestamptz AS member
             FROM loop_guard_admit($1::uuid, $2::uuid, $3::uuid, $4::timestamptz, $5::int, $6::int) AS next`,
    values: [g.channelId, g.threadId ?? NO_THREAD, g.authorId, g.at, g.maxMessages, g.windowMs],
  })
  const { next, member } = rows[0]!
  if (next === null) return { admitted: true, recorded: true }
  if (!member) return { admitted: true, recorded: false }
  return { admitted: false, retryAt: next }
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
