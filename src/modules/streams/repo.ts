// Streaming messages (issue 25): the message row holds the text so far (written by the flush at
// most once a second, and by the end: ./live.ts), and a message_streams row holds the stream's
// bookkeeping while it streams. That row is the stream's lock: the flush, the end and the sweep
// all take it, so a stream ends exactly once, whichever instance ends it.
import type pg from 'pg'
import type { Prisma } from '../../db/client.ts'
import { MESSAGE_BY_ID, MESSAGE_IN_CHANNEL, messageRecord, type MessageRow, type StoredMessage } from '../messages/read-model.ts'

type Tx = Prisma.TransactionClient

export interface NewStream {
  id: string
  channelId: string
  authorId: string
  authorName: string
  text: string
  createdAt: Date
  inReplyToEvent: string | null
  chainDepth: number
  threadId: string | null
}

/** How many messages the agent has streaming now. */
export async function streamingCount(pool: pg.Pool, authorId: string): Promise<number> {
  const { rows } = await pool.query<{ n: number }>({ name: 'streams-of-author', text: 'SELECT count(*)::int AS n FROM message_streams WHERE author_id = $1', values: [authorId] })
  return rows[0]?.n ?? 0
}

/**
 * Inserts the streaming message and its bookkeeping row if the author is a member of the channel
 * (and, for a reply, its root is a root of this channel: the root's summary is updated under its
 * row lock, as a posted reply's is). False when nothing was inserted.
 */
export async function insertStream(tx: Tx, s: NewStream): Promise<boolean> {
  const member = await tx.$queryRaw<{ ok: boolean }[]>`SELECT EXISTS (SELECT 1 FROM channel_members WHERE channel_id = ${s.channelId}::uuid AND member_id = ${s.authorId}::uuid) AS ok`
  if (!member[0]?.ok) return false
  if (s.threadId) {
    const root = await tx.$queryRaw<{ id: string }[]>`
      UPDATE messages r
         SET reply_count = r.reply_count + 1,
             last_reply_at = greatest(r.last_reply_at, ${s.createdAt}),
             recent_replier_ids = (
               SELECT array_agg(x ORDER BY o) FROM (
                 SELECT x, min(o) AS o FROM unnest(ARRAY[${s.authorId}::uuid] || r.recent_replier_ids) WITH ORDINALITY AS u(x, o)
                  GROUP BY x ORDER BY min(o) LIMIT 3) q)
       WHERE r.id = ${s.threadId}::uuid AND r.channel_id = ${s.channelId}::uuid AND r.thread_id IS NULL
      RETURNING r.id::text`
    if (!root.length) return false
  }
  await tx.$executeRaw`
    INSERT INTO messages (id, channel_id, author_id, author_type, author_name, text, created_at, in_reply_to_event, chain_depth, thread_id, stream_state)
    VALUES (${s.id}::uuid, ${s.channelId}::uuid, ${s.authorId}::uuid, 'AGENT'::actor_type, ${s.authorName}, ${s.text}, ${s.createdAt}, ${s.inReplyToEvent}::uuid, ${s.chainDepth}, ${s.threadId}::uuid, 'streaming')`
  await tx.$executeRaw`
    INSERT INTO message_streams (message_id, channel_id, author_id, utf16_length, last_append_at)
    VALUES (${s.id}::uuid, ${s.channelId}::uuid, ${s.authorId}::uuid, ${s.text.length}, ${s.createdAt})`
  return true
}

/**
 * A stream of this author in this channel as the row holds it (the text as of the last flush), if
 * it is streaming and the author is still a member: what an instance loads into its live store
 * (./texts.ts) when it does not know the stream.
 */
export async function loadStream(
  pool: pg.Pool,
  messageId: string,
  authorId: string,
  channelId: string,
): Promise<{ text: string; threadId: string | null; seq: number; length: number; lastAppendAt: Date } | null> {
  const { rows } = await pool.query<{ text: string; thread_id: string | null; seq: number; utf16_length: number; last_append_at: Date }>({
    name: 'stream-load',
    text: `SELECT m.text, m.thread_id, s.seq, s.utf16_length, s.last_append_at
             FROM message_streams s JOIN messages m ON m.id = s.message_id
            WHERE s.message_id = $1 AND s.author_id = $2 AND s.channel_id = $3 AND m.stream_state = 'streaming'
              AND EXISTS (SELECT 1 FROM channel_members c WHERE c.channel_id = s.channel_id AND c.member_id = s.author_id)`,
    values: [messageId, authorId, channelId],
  })
  const r = rows[0]
  return r ? { text: r.text, threadId: r.thread_id, seq: r.seq, length: r.utf16_length, lastAppendAt: r.last_append_at } : null
}

export interface Flushed {
  messageId: string
  text: string
  seq: number
  length: number
  lastAppendAt: Date
}

// One statement for every stream an instance flushes: each row that is still streaming and
// behind takes the text (a flush of another instance, or an older one of this, that comes late
// writes nothing). Answers the ids whose stream is gone (ended, or its message deleted).
const FLUSH_SQL = `
  WITH f AS (
    SELECT * FROM unnest($1::uuid[], $2::text[], $3::int[], $4::int[], $5::timestamptz[]) AS f(id, text, seq, len, at)
  ), s AS (
    UPDATE message_streams s SET seq = f.seq, utf16_length = f.len, last_append_at = greatest(s.last_append_at, f.at)
      FROM f WHERE s.message_id = f.id AND s.seq < f.seq
    RETURNING s.message_id
  ), m AS (
    UPDATE messages m SET text = f.text FROM f, s WHERE m.id = f.id AND s.message_id = f.id AND m.stream_state = 'streaming'
    RETURNING m.id
  )
  SELECT f.id::text FROM f WHERE NOT EXISTS (SELECT 1 FROM message_streams x WHERE x.message_id = f.id)`

/** Writes the streams' text so far to their rows; answers the ids of those no longer streaming. */
export async function flushStreams(pool: pg.Pool, streams: Flushed[]): Promise<string[]> {
  if (!streams.length) return []
  const { rows } = await pool.query<{ id: string }>({
    name: 'streams-flush',
    text: FLUSH_SQL,
    values: [streams.map((s) => s.messageId), streams.map((s) => s.text), streams.map((s) => s.seq), streams.map((s) => s.length), streams.map((s) => s.lastAppendAt)],
  })
  return rows.map((r) => r.id)
}

/** The streams of this author in this channel (to flush and forget when it leaves the channel). */
export async function streamsOf(pool: pg.Pool, channelId: string, authorId: string): Promise<string[]> {
  const { rows } = await pool.query<{ id: string }>({
    name: 'streams-of-member',
    text: 'SELECT message_id::text AS id FROM message_streams WHERE channel_id = $1 AND author_id = $2',
    values: [channelId, authorId],
  })
  return rows.map((r) => r.id)
}

/**
 * Ends a stream: removes its bookkeeping row (under its lock) and sets the message's state, its
 * text when a final one is given, its mentions, and the attachment a finish brings. Null when it was not streaming (ended
 * meanwhile, by its author or the sweep).
 */
export async function endStream(
  tx: Tx,
  e: {
    messageId: string
    authorId: string
    state: 'complete' | 'cancelled' | 'interrupted'
    text: (current: string) => string
    mentions: (text: string) => Promise<string[]>
    /** A file the finish attaches (stored on disk already). */
    attachment?: { id: string; fileName: string; contentType: string; size: number; storageName: string }
  },
): Promise<{ text: string } | null> {
  const removed = await tx.$queryRaw<{ id: string }[]>`DELETE FROM message_streams WHERE message_id = ${e.messageId}::uuid AND author_id = ${e.authorId}::uuid RETURNING message_id::text AS id`
  if (!removed.length) return null
  const [row] = await tx.$queryRaw<{ text: string }[]>`SELECT text FROM messages WHERE id = ${e.messageId}::uuid`
  const text = e.text(row!.text)
  const mentions = await e.mentions(text)
  await tx.$executeRaw`UPDATE messages SET text = ${text}, stream_state = ${e.state}, mentions = ${mentions}::uuid[] WHERE id = ${e.messageId}::uuid`
  if (e.attachment) await tx.attachment.create({ data: { ...e.attachment, messageId: e.messageId } })
  return { text }
}

/**
 * The streams to interrupt now: no append since `idleBefore`, or a Stop requested before
 * `stopBefore` and not answered. Each is then ended by `endStream`, whose DELETE takes its row:
 * a concurrent sweep (another instance) that picked the same one finds it gone.
 */
export async function staleStreams(pool: pg.Pool, idleBefore: Date, stopBefore: Date, limit: number): Promise<{ messageId: string; authorId: string; channelId: string }[]> {
  const { rows } = await pool.query<{ message_id: string; author_id: string; channel_id: string }>({
    name: 'streams-stale',
    text: `SELECT message_id, author_id, channel_id FROM message_streams
            WHERE last_append_at < $1 OR stop_requested_at < $2
            ORDER BY last_append_at LIMIT $3`,
    values: [idleBefore, stopBefore, limit],
  })
  return rows.map((r) => ({ messageId: r.message_id, authorId: r.author_id, channelId: r.channel_id }))
}

/** Records the first Stop on a streaming message; false when one was recorded already or it is not streaming. */
export async function requestStop(tx: Tx, messageId: string, by: string, at: Date): Promise<boolean> {
  const n = await tx.$executeRaw`UPDATE message_streams SET stop_requested_at = ${at}, stop_requested_by = ${by}::uuid WHERE message_id = ${messageId}::uuid AND stop_requested_at IS NULL`
  return n > 0
}

/** A message of this channel (with its attachment), if any: the message read model (src/modules/messages/read-model.ts). */
export async function messageInChannel(pool: pg.Pool, channelId: string, messageId: string): Promise<StoredMessage | null> {
  const { rows } = await pool.query<MessageRow>({ ...MESSAGE_IN_CHANNEL, values: [messageId, channelId] })
  return rows[0] ? messageRecord(rows[0]) : null
}

/** What a reply's thread_id names in this channel: null when nothing; its own thread_id tells a root (null) from a reply. */
export async function threadTarget(pool: pg.Pool, channelId: string, messageId: string): Promise<{ threadId: string | null } | null> {
  const { rows } = await pool.query<{ thread_id: string | null }>({
    name: 'stream-thread-target',
    text: 'SELECT thread_id FROM messages WHERE id = $1 AND channel_id = $2',
    values: [messageId, channelId],
  })
  return rows[0] ? { threadId: rows[0].thread_id } : null
}

/** The message as the message routes read it, inside the transaction that just wrote it. */
export async function messageById(tx: Tx, id: string): Promise<StoredMessage | null> {
  const [row] = await tx.$queryRawUnsafe<MessageRow[]>(MESSAGE_BY_ID, id)
  return row ? messageRecord(row) : null
}

/** Sets the status of the author's streaming message; its thread, or null when it did not. */
export async function setStatus(pool: pg.Pool, s: { messageId: string; channelId: string; authorId: string; status: unknown }): Promise<{ threadId: string | null } | null> {
  const { rows } = await pool.query<{ thread_id: string | null }>({
    name: 'stream-status',
    text: `UPDATE message_streams s SET status = $4::jsonb FROM messages m
            WHERE s.message_id = $1 AND s.channel_id = $2 AND s.author_id = $3 AND m.id = s.message_id
           RETURNING m.thread_id`,
    values: [s.messageId, s.channelId, s.authorId, JSON.stringify(s.status)],
  })
  return rows[0] ? { threadId: rows[0].thread_id } : null
}

/** The live part of a stream (null once it ended). */
export async function streamRow(pool: pg.Pool, messageId: string): Promise<{ seq: number; status: unknown; stopRequested: boolean } | null> {
  const { rows } = await pool.query<{ seq: number; status: unknown; stop: boolean }>({
    name: 'stream-row',
    text: 'SELECT seq, status, stop_requested_at IS NOT NULL AS stop FROM message_streams WHERE message_id = $1',
    values: [messageId],
  })
  return rows[0] ? { seq: rows[0].seq, status: rows[0].status, stopRequested: rows[0].stop } : null
}

// ---- status on a thread without a stream ----

/** Sets the agent's status on a root of this channel while the agent is a member; false when not. */
export async function setThreadStatus(pool: pg.Pool, s: { rootId: string; channelId: string; agentId: string; agentName: string; status: unknown; at: Date }): Promise<boolean> {
  const { rowCount } = await pool.query({
    name: 'thread-status-set',
    text: `INSERT INTO thread_statuses (root_id, agent_id, channel_id, agent_name, status, updated_at)
           SELECT m.id, $3, m.channel_id, $4, $5::jsonb, $6 FROM messages m
            WHERE m.id = $1 AND m.channel_id = $2 AND m.thread_id IS NULL
              AND EXISTS (SELECT 1 FROM channel_members c WHERE c.channel_id = m.channel_id AND c.member_id = $3)
           ON CONFLICT (root_id, agent_id) DO UPDATE SET status = EXCLUDED.status, agent_name = EXCLUDED.agent_name, updated_at = EXCLUDED.updated_at`,
    values: [s.rootId, s.channelId, s.agentId, s.agentName, JSON.stringify(s.status), s.at],
  })
  return (rowCount ?? 0) > 0
}

/** Removes the agent's status on the thread; false when it had none. */
export async function clearThreadStatus(pool: pg.Pool, rootId: string, agentId: string): Promise<{ channelId: string; agentName: string } | null> {
  const { rows } = await pool.query<{ channel_id: string; agent_name: string }>({
    name: 'thread-status-clear',
    text: 'DELETE FROM thread_statuses WHERE root_id = $1 AND agent_id = $2 RETURNING channel_id, agent_name',
    values: [rootId, agentId],
  })
  return rows[0] ? { channelId: rows[0].channel_id, agentName: rows[0].agent_name } : null
}

export interface ThreadStatusRow {
  rootId: string
  channelId: string
  agentId: string
  agentName: string
  status: unknown
  updatedAt: Date
}

/** The statuses set on a thread, oldest first. */
export async function threadStatuses(pool: pg.Pool, rootId: string): Promise<ThreadStatusRow[]> {
  const { rows } = await pool.query<{ root_id: string; channel_id: string; agent_id: string; agent_name: string; status: unknown; updated_at: Date }>({
    name: 'thread-statuses',
    text: 'SELECT root_id, channel_id, agent_id, agent_name, status, updated_at FROM thread_statuses WHERE root_id = $1 ORDER BY updated_at, agent_id',
    values: [rootId],
  })
  return rows.map((r) => ({ rootId: r.root_id, channelId: r.channel_id, agentId: r.agent_id, agentName: r.agent_name, status: r.status, updatedAt: r.updated_at }))
}

/** Removes the statuses unchanged since `before` (each once, whichever sweep takes it) and answers them. */
export async function expireThreadStatuses(pool: pg.Pool, before: Date, limit: number): Promise<ThreadStatusRow[]> {
  const { rows } = await pool.query<{ root_id: string; channel_id: string; agent_id: string; agent_name: string }>({
    name: 'thread-statuses-expire',
    text: `DELETE FROM thread_statuses t USING (
             SELECT root_id, agent_id FROM thread_statuses WHERE updated_at < $1 ORDER BY updated_at LIMIT $2 FOR UPDATE SKIP LOCKED
           ) old WHERE t.root_id = old.root_id AND t.agent_id = old.agent_id
           RETURNING t.root_id, t.channel_id, t.agent_id, t.agent_name`,
    values: [before, limit],
  })
  return rows.map((r) => ({ rootId: r.root_id, channelId: r.channel_id, agentId: r.agent_id, agentName: r.agent_name, status: null, updatedAt: before }))
}
