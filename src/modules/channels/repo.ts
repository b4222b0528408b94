// Channels and memberships. Hot lookups (membership checks made on every post and by realtime
// delivery) go through the shared pg pool; everything else through Prisma.
import type pg from 'pg'
import type { ReadOnly } from '../../db/commit-guard.ts'
import { uuidv7Time } from '../../lib/ids.ts'
import type { Prisma, PrismaClient } from '../../db/client.ts'
import { UNREAD_COUNT_MAX } from './schemas.ts'

type Db = PrismaClient | Prisma.TransactionClient
type ActorType = 'AGENT' | 'HUMAN'

/** pg_advisory_xact_lock key ("ams\x03"): serialises channel name checks (unique ignoring case). */
const CHANNEL_NAMES_LOCK = 1634562819

export interface ChannelRow {
  id: string
  name: string
  description: string
  topic: string | null
  type: 'channel' | 'dm'
  dmKey: string | null
  private: boolean
  createdById: string | null
  createdAt: Date
  updatedAt: Date
}

export async function isMember(pool: pg.Pool, channelId: string, memberId: string): Promise<boolean> {
  const { rowCount } = await pool.query('SELECT 1 FROM channel_members WHERE channel_id = $1 AND member_id = $2', [channelId, memberId])
  return (rowCount ?? 0) > 0
}

export async function memberIds(pool: pg.Pool, channelId: string): Promise<string[]> {
  const { rows } = await pool.query<{ member_id: string }>('SELECT member_id FROM channel_members WHERE channel_id = $1 ORDER BY joined_at, member_id', [channelId])
  return rows.map((r) => r.member_id)
}

export async function channelIdsOf(pool: pg.Pool, memberId: string): Promise<string[]> {
  const { rows } = await pool.query<{ channel_id: string }>('SELECT channel_id FROM channel_members WHERE member_id = $1', [memberId])
  return rows.map((r) => r.channel_id)
}

/**
 * The channels whose events a member receives live: its own, and for the workspace owner (who
 * reads every regular channel) every regular channel too.
 */
export async function liveChannelsOf(pool: pg.Pool, memberId: string): Promise<{ channelIds: string[]; readsAllRegular: boolean }> {
  const owner = await pool.query<{ is_owner: boolean }>('SELECT is_owner FROM users WHERE id = $1', [memberId])
  const readsAllRegular = owner.rows[0]?.is_owner === true
  if (!readsAllRegular) return { channelIds: await channelIdsOf(pool, memberId), readsAllRegular }
  const { rows } = await pool.query<{ id: string }>("SELECT channel_id AS id FROM channel_members WHERE member_id = $1 UNION SELECT id FROM channels WHERE type = 'channel'", [memberId])
  return { channelIds: rows.map((r) => r.id), readsAllRegular }
}

/** The channel and whether `memberId` belongs to it (null: no such channel). */
export async function findChannelFor(pool: pg.Pool, channelId: string, memberId: string): Promise<{ channel: ChannelRow; member: boolean } | null> {
  const { rows } = await pool.query(
    `SELECT c.id, c.name, c.description, c.topic, c.type, c.dm_key, c.private, c.created_by_id, c.created_at, c.updated_at,
            EXISTS (SELECT 1 FROM channel_members m WHERE m.channel_id = c.id AND m.member_id = $2) AS is_member
       FROM channels c WHERE c.id = $1`,
    [channelId, memberId],
  )
  const r = rows[0]
  if (!r) return null
  return {
    channel: {
      id: r.id,
      name: r.name,
      description: r.description,
      topic: r.topic,
      type: r.type,
      dmKey: r.dm_key,
      private: r.private,
      createdById: r.created_by_id,
      createdAt: r.created_at,
      updatedAt: r.updated_at,
    },
    member: r.is_member,
  }
}

export async function isPrimaryAgent(db: Db, agentId: string): Promise<boolean> {
  const agent = await db.agent.findUnique({ where: { id: agentId }, select: { isPrimary: true } })
  return agent?.isPrimary ?? false
}

export async function lockChannelNames(tx: Prisma.TransactionClient): Promise<void> {
  await tx.$queryRaw`SELECT 1 AS locked FROM (SELECT pg_advisory_xact_lock(${CHANNEL_NAMES_LOCK}::bigint)) AS l`
}

/** A regular channel (not a DM) with this name ignoring case, optionally other than `exceptId`. */
export function findChannelNamed(db: Db, name: string, exceptId?: string) {
  return db.channel.findFirst({
    where: { type: 'channel', name: { equals: name, mode: 'insensitive' }, ...(exceptId ? { id: { not: exceptId } } : {}) },
    select: { id: true },
  })
}

export function createChannel(db: Db, data: Prisma.ChannelUncheckedCreateInput) {
  return db.channel.create({ data })
}

export function updateChannel(db: Db, id: string, data: { name?: string; description?: string; topic?: string | null; private?: boolean }) {
  return db.channel.update({ where: { id }, data })
}

export function deleteChannel(db: Db, id: string) {
  return db.channel.delete({ where: { id } })
}

/** Storage names of every file attached to a message of the channel. */
export async function attachmentFilesOf(db: Db, channelId: string): Promise<string[]> {
  const rows = await db.attachment.findMany({ where: { message: { channelId } }, select: { storageName: true } })
  return rows.map((r) => r.storageName)
}

const NIL_UUID = '00000000-0000-0000-0000-000000000000'
/** SQL: the milliseconds since the epoch a UUIDv7 carries (its first 48 bits), as a bigint. */
const UUIDV7_MILLISECONDS = (id: string): string => `('x' || encode(substring(uuid_send(${id}) FROM 1 FOR 6), 'hex'))::bit(48)::bigint`

/**
 * The sidebar in one statement, and its answer is the response body: the JSON text of
 * `GET /api/v1/channels` (ChannelListSchema), built by PostgreSQL, so that Node neither parses
 * two thousand fields of two hundred rows nor builds and serialises objects from them (about
 * half of the server's time for this request; docs/performance.md, "Unread counts at a million
 * messages, round 3"). Its items are what the list's schema says, byte for byte as JSON.stringify
 * wrote them before: fields in the schema's order, text escaped by to_json (the same escapes as
 * JSON.stringify: \" \\ \b \f \n \r \t and \u00xx for other control characters),
 * booleans and numbers as text, ids as PostgreSQL writes a uuid, and `last_message_at` as
 * Date.toISOString() writes the newest id's UUIDv7 time (milliseconds, 'Z').
 *
 * The channels the member belongs to (plus, for the workspace owner, every regular channel),
 * oldest first, each with the member's read marker, its unread count (messages after the marker
 * not written by the member, at most UNREAD_COUNT_MAX: an index-only range scan of messages
 * (channel_id, id) INCLUDE (author_id), bounded below by the marker and stopped at the cap), the
 * newest message's time and for a DM the other participant's name. The newest id is looked for
 * at or after the marker first: PostgreSQL reads a whole leaf page of the index for a scan
 * bounded by the channel alone, and only the range up to the marker (usually a few entries) with
 * it; only a marker whose message is gone with none after it needs the unbounded look.
 */
export async function sidebarJson(pool: pg.Pool, memberId: string, includeAllRegular: boolean): Promise<string> {
  const scope = includeAllRegular
    ? "FROM channels c LEFT JOIN channel_members cm ON cm.channel_id = c.id AND cm.member_id = $1 WHERE cm.member_id IS NOT NULL OR c.type = 'channel'"
    : 'FROM channel_members cm JOIN channels c ON c.id = cm.channel_id WHERE cm.member_id = $1'
  const statement: pg.QueryArrayConfig<[string]> & ReadOnly = {
    // Prepared once per connection: planning the statement cost about as much as running it.
    name: includeAllRegular ? 'channel-sidebar-owner' : 'channel-sidebar',
    // It writes nothing: sent with its Sync, one round trip instead of two (src/db/commit-guard.ts).
    readOnly: true,
    rowMode: 'array',
    // OFFSET 0 keeps the inner select a subquery: merged into the outer one, a subplan whose
    // column the item names twice could run twice.
    text: `SELECT '[' || COALESCE(string_agg(
              '{"id":"' || s.id || '","name":' || to_json(s.name) || ',"type":"' || s.type || '","description":' || to_json(s.description)
              || ',"private":' || s.private || ',"unread_count":' || s.unread
              || ',"last_read_message_id":' || COALESCE('"' || s.last_read_message_id || '"', 'null') || ',"is_member":' || s.is_member
              || ',"last_message_at":' || COALESCE('"' || to_char(timestamp 'epoch' + ${UUIDV7_MILLISECONDS('s.newest')} * interval '1 millisecond', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"', 'null')
              || '}', ',' ORDER BY s.created_at, s.id), '') || ']'
       FROM (SELECT c.id, c.type, c.description, c.type = 'dm' OR c.private AS private, cm.member_id IS NOT NULL AS is_member, cm.last_read_message_id, c.created_at,
            COALESCE(CASE WHEN c.type = 'dm' THEN
              (SELECT COALESCE(u.display_name, a.display_name) FROM channel_members p
                 LEFT JOIN users u ON u.id = p.member_id LEFT JOIN agents a ON a.id = p.member_id
                WHERE p.channel_id = c.id AND p.member_id <> $1 LIMIT 1) END, c.name) AS name,
            CASE WHEN cm.member_id IS NULL THEN 0 ELSE
              (SELECT count(*)::int FROM (SELECT 1 FROM messages m
                WHERE m.channel_id = c.id AND m.author_id <> $1
                  AND m.id > COALESCE(cm.last_read_message_id, '${NIL_UUID}')
                LIMIT ${UNREAD_COUNT_MAX}) AS u) END AS unread,
            COALESCE(
              (SELECT m.id FROM messages m WHERE m.channel_id = c.id AND m.id >= COALESCE(cm.last_read_message_id, '${NIL_UUID}') ORDER BY m.id DESC LIMIT 1),
              (SELECT m.id FROM messages m WHERE m.channel_id = c.id ORDER BY m.id DESC LIMIT 1)) AS newest
       ${scope} OFFSET 0) AS s`,
    values: [memberId],
  }
  const { rows } = await pool.query<[string]>(statement)
  return rows[0]![0]
}

/** Public regular channels (the channel browser), by name, optionally whose name contains `query`. */
export async function listPublicChannels(pool: pg.Pool, memberId: string, query: string | undefined) {
  const { rows } = await pool.query<{ id: string; name: string; description: string; topic: string | null; created_at: Date; member_count: number; is_member: boolean }>(
    `SELECT c.id, c.name, c.description, c.topic, c.created_at,
            (SELECT count(*)::int FROM channel_members m WHERE m.channel_id = c.id) AS member_count,
            EXISTS (SELECT 1 FROM channel_members m WHERE m.channel_id = c.id AND m.member_id = $1) AS is_member
       FROM channels c
      WHERE c.type = 'channel' AND NOT c.private
        AND ($2::text IS NULL OR strpos(lower(c.name), lower($2::text)) > 0)
      ORDER BY lower(c.name), c.id`,
    [memberId, query ?? null],
  )
  return rows
}

export function listMembers(db: Db, channelId: string) {
  return db.channelMember.findMany({ where: { channelId }, orderBy: [{ joinedAt: 'asc' }, { memberId: 'asc' }] })
}

export function findMember(db: Db, channelId: string, memberId: string) {
  return db.channelMember.findUnique({ where: { channelId_memberId: { channelId, memberId } } })
}

export function addMember(db: Db, channelId: string, memberId: string, memberType: ActorType) {
  return db.channelMember.create({ data: { channelId, memberId, memberType } })
}

export function addMembers(db: Db, rows: { channelId: string; memberId: string; memberType: ActorType }[]) {
  return db.channelMember.createMany({ data: rows })
}

export function removeMember(db: Db, channelId: string, memberId: string) {
  return db.channelMember.deleteMany({ where: { channelId, memberId } })
}

export interface Actor {
  id: string
  type: ActorType
  name: string
  /** Agents: the handle (letters, digits, hyphens); humans: the display name. */
  handle: string
}

/** Users and agents by id (a member id may name either). */
export async function findActors(db: Db, ids: string[]): Promise<Map<string, Actor>> {
  const [users, agents] = await Promise.all([
    db.user.findMany({ where: { id: { in: ids } }, select: { id: true, displayName: true } }),
    db.agent.findMany({ where: { id: { in: ids } }, select: { id: true, name: true, displayName: true } }),
  ])
  const out = new Map<string, Actor>()
  for (const u of users) out.set(u.id, { id: u.id, type: 'HUMAN', name: u.displayName, handle: u.displayName })
  for (const a of agents) out.set(a.id, { id: a.id, type: 'AGENT', name: a.displayName, handle: a.name })
  return out
}

export interface ReadState {
  channelId: string
  lastReadMessageId: string | null
  unreadCount: number
}

/**
 * The member's read marker and unread count in each of the given channels it belongs to:
 * messages after the marker (ids are UUIDv7, in posting order) not written by the member, at
 * most UNREAD_COUNT_MAX.
 * The marker is a bound of the (channel_id, id) index range: written as `IS NULL OR id > marker`
 * it was a filter instead, and every message of every channel was read (5 s for 200 channels of
 * 5,000 messages; docs/performance.md, "Search at a million messages").
 */
export async function readStates(pool: pg.Pool, memberId: string, channelIds: string[]): Promise<Map<string, ReadState>> {
  if (!channelIds.length) return new Map()
  const { rows } = await pool.query<{ channel_id: string; last_read_message_id: string | null; unread: string }>(
    `SELECT cm.channel_id, cm.last_read_message_id,
            (SELECT count(*) FROM (SELECT 1 FROM messages m
              WHERE m.channel_id = cm.channel_id AND m.author_id <> cm.member_id
                AND m.id > COALESCE(cm.last_read_message_id, '${NIL_UUID}')
              LIMIT ${UNREAD_COUNT_MAX}) AS u) AS unread
       FROM channel_members cm
      WHERE cm.member_id = $1 AND cm.channel_id = ANY($2::uuid[])`,
    [memberId, channelIds],
  )
  return new Map(rows.map((r) => [r.channel_id, { channelId: r.channel_id, lastReadMessageId: r.last_read_message_id, unreadCount: Number(r.unread) }]))
}

/**
 * When each channel's newest message was posted, from its id (UUIDv7, in posting order): one
 * index-only descent of messages (channel_id, id) per channel, no table read.
 */
export async function lastMessageTimes(pool: pg.Pool, channelIds: string[]): Promise<Map<string, Date>> {
  if (!channelIds.length) return new Map()
  const { rows } = await pool.query<{ id: string; newest: string | null }>(
    'SELECT c.id, (SELECT m.id FROM messages m WHERE m.channel_id = c.id ORDER BY m.id DESC LIMIT 1) AS newest FROM unnest($1::uuid[]) AS c(id)',
    [channelIds],
  )
  return new Map(rows.filter((r) => r.newest !== null).map((r) => [r.id, uuidv7Time(r.newest!)]))
}

/**
 * Moves the member's read marker to a message of the channel, never backwards. Null when the
 * message is not in this channel (or the member is not one).
 */
export async function markRead(pool: pg.Pool, channelId: string, memberId: string, messageId: string): Promise<string | null> {
  const { rows } = await pool.query<{ last_read_message_id: string }>(
    `UPDATE channel_members
        SET last_read_message_id = CASE WHEN last_read_message_id IS NULL OR last_read_message_id < $3::uuid THEN $3::uuid ELSE last_read_message_id END
      WHERE channel_id = $1 AND member_id = $2
        AND EXISTS (SELECT 1 FROM messages WHERE id = $3::uuid AND channel_id = $1)
      RETURNING last_read_message_id`,
    [channelId, memberId, messageId],
  )
  return rows[0]?.last_read_message_id ?? null
}
