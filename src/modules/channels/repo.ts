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

export interface SidebarRow {
  id: string
  /** For a DM: the other participant's display name (the channel's own name if it has none). */
  name: string
  type: 'channel' | 'dm'
  description: string
  private: boolean
  isMember: boolean
  lastReadMessageId: string | null
  unreadCount: number
  lastMessageAt: Date | null
}

/**
 * The sidebar in one statement: the channels the member belongs to (plus, for the workspace owner,
 * every regular channel), oldest first, each with the member's read marker, its unread count
 * (messages after the marker not written by the member, at most UNREAD_COUNT_MAX: an index-only
 * range scan of messages (channel_id, id) INCLUDE (author_id), bounded below by the marker and
 * stopped at the cap, so a long-unread channel costs no more than a recent one), the newest
 * message's id, whose UUIDv7 time is the last activity, and for a DM the other participant's
 * name. One round trip and no ORM mapping: it is the request every open page makes
 * (docs/performance.md, "Sidebar at a million messages", and "The sidebar's round trips").
 */
export async function sidebar(pool: pg.Pool, memberId: string, includeAllRegular: boolean): Promise<SidebarRow[]> {
  const scope = includeAllRegular
    ? "FROM channels c LEFT JOIN channel_members cm ON cm.channel_id = c.id AND cm.member_id = $1 WHERE cm.member_id IS NOT NULL OR c.type = 'channel'"
    : 'FROM channel_members cm JOIN channels c ON c.id = cm.channel_id WHERE cm.member_id = $1'
  const statement: pg.QueryArrayConfig<[string]> & ReadOnly = {
    // Prepared once per connection: planning the statement cost about as much as running it.
    name: includeAllRegular ? 'channel-sidebar-owner' : 'channel-sidebar',
    // It writes nothing: sent with its Sync, one round trip instead of two (src/db/commit-guard.ts).
    readOnly: true,
    // Rows as arrays: no object with nine named fields per channel to build and then map.
    rowMode: 'array',
    text: `SELECT c.id, c.name, c.type, c.description, c.private, cm.member_id IS NOT NULL AS is_member, cm.last_read_message_id,
            CASE WHEN cm.member_id IS NULL THEN 0 ELSE
              (SELECT count(*)::int FROM (SELECT 1 FROM messages m
                WHERE m.channel_id = c.id AND m.author_id <> $1
                  AND m.id > COALESCE(cm.last_read_message_id, '00000000-0000-0000-0000-000000000000')
                LIMIT ${UNREAD_COUNT_MAX}) AS u) END AS unread,
            (SELECT m.id FROM messages m WHERE m.channel_id = c.id ORDER BY m.id DESC LIMIT 1) AS newest,
            CASE WHEN c.type = 'dm' THEN
              (SELECT COALESCE(u.display_name, a.display_name) FROM channel_members p
                 LEFT JOIN users u ON u.id = p.member_id LEFT JOIN agents a ON a.id = p.member_id
                WHERE p.channel_id = c.id AND p.member_id <> $1 LIMIT 1) END AS peer_name
       ${scope}
      ORDER BY c.created_at, c.id`,
    values: [memberId],
  }
  const { rows } = await pool.query<SidebarColumns>(statement)
  return rows.map(([id, name, type, description, isPrivate, isMember, lastRead, unread, newest, peerName]) => ({
    id,
    name: peerName ?? name,
    type,
    description,
    private: isPrivate,
    isMember,
    lastReadMessageId: lastRead,
    unreadCount: unread,
    lastMessageAt: newest ? uuidv7Time(newest) : null,
  }))
}

type SidebarColumns = [
  id: string,
  name: string,
  type: 'channel' | 'dm',
  description: string,
  isPrivate: boolean,
  isMember: boolean,
  lastRead: string | null,
  unread: number,
  newest: string | null,
  peerName: string | null,
]

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
                AND m.id > COALESCE(cm.last_read_message_id, '00000000-0000-0000-0000-000000000000')
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
