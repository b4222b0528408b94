// Agents, their API keys, and the agent's channel memberships (removed with the agent).
import type pg from 'pg'
import type { Db, Prisma } from '../../db/client.ts'
import { Prisma as PrismaValues } from '../../generated/prisma/client.ts'
import { Batcher } from '../../lib/batcher.ts'

/** pg_advisory_xact_lock key ("ams\x02"): serialises agent name checks (names are unique ignoring case). */
const AGENT_NAMES_LOCK = 1634562818

export async function lockAgentNames(tx: Prisma.TransactionClient): Promise<void> {
  await tx.$queryRaw`SELECT 1 AS locked FROM (SELECT pg_advisory_xact_lock(${AGENT_NAMES_LOCK}::bigint)) AS l`
}

/** Agents whose name equals one of `names` ignoring case (optionally not counting one agent). */
export function findAgentsNamed(db: Db, names: string[], exceptId?: string) {
  return db.agent.findMany({
    where: {
      OR: names.map((name) => ({ name: { equals: name, mode: 'insensitive' as const } })),
      ...(exceptId ? { id: { not: exceptId } } : {}),
    },
    select: { id: true, name: true },
  })
}

export function createAgent(db: Db, data: Prisma.AgentUncheckedCreateInput) {
  return db.agent.create({ data })
}

export function findAgent(db: Db, id: string) {
  return db.agent.findUnique({ where: { id } })
}

export function listAgents(db: Db) {
  return db.agent.findMany({ orderBy: { id: 'asc' } })
}

export interface AgentChanges {
  name?: string
  displayName?: string
  description?: string | null
  avatarUrl?: string | null
  /** null clears the metadata. */
  metadata?: Record<string, unknown> | null
}

export function updateAgent(db: Db, id: string, changes: AgentChanges) {
  const { metadata, ...rest } = changes
  const data: Prisma.AgentUncheckedUpdateInput = { ...rest }
  if (metadata !== undefined) data.metadata = metadata === null ? PrismaValues.DbNull : (metadata as Prisma.InputJsonValue)
  return db.agent.update({ where: { id }, data })
}

/** Deletes the agent; its keys, webhooks and integration links go with it (foreign keys cascade). */
export function deleteAgent(db: Db, id: string) {
  return db.agent.delete({ where: { id } })
}

export async function membershipChannelIds(db: Db, memberId: string): Promise<string[]> {
  const rows = await db.channelMember.findMany({ where: { memberId }, select: { channelId: true } })
  return rows.map((r) => r.channelId)
}

export function deleteMemberships(db: Db, memberId: string) {
  return db.channelMember.deleteMany({ where: { memberId } })
}

export function createApiKey(db: Db, data: Prisma.ApiKeyUncheckedCreateInput) {
  return db.apiKey.create({ data })
}

export function listApiKeys(db: Db, agentId: string) {
  return db.apiKey.findMany({ where: { agentId }, orderBy: { id: 'asc' } })
}

export function findApiKey(db: Db, agentId: string, keyId: string) {
  return db.apiKey.findFirst({ where: { id: keyId, agentId } })
}

/** Sets revoked_at unless already set; the auth plugin refuses a revoked key on its next request. */
export function revokeApiKey(db: Db, keyId: string) {
  return db.apiKey.updateMany({ where: { id: keyId, revokedAt: null }, data: { revokedAt: new Date() } })
}

/** An agent API key with its agent, as authentication needs it. */
export interface AgentKeyRecord {
  keyId: string
  keyHash: string
  revoked: boolean
  agentId: string
  name: string
  displayName: string
}

/**
 * The lookup of agent API keys by SHA-256 hash. Every agent request starts here, so it is a
 * prepared statement through `pg` rather than Prisma (whose findUnique + include costs two round
 * trips and several times the CPU), and concurrent lookups share one statement
 * (src/lib/batcher.ts).
 */
export function agentKeyLookup(pool: pg.Pool): (keyHash: string) => Promise<AgentKeyRecord | undefined> {
  const lookups = new Batcher<string, AgentKeyRecord | undefined>(
    async (hashes) => {
      const { rows } = await pool.query<{ key_id: string; key_hash: string; revoked: boolean; id: string; name: string; display_name: string }>({
        name: 'auth-agent-keys',
        text: `SELECT k.id::text AS key_id, k.key_hash, k.revoked_at IS NOT NULL AS revoked, a.id::text AS id, a.name, a.display_name
                 FROM api_keys k JOIN agents a ON a.id = k.agent_id WHERE k.key_hash = ANY($1::text[])`,
        values: [hashes],
      })
      const byHash = new Map(rows.map((r) => [r.key_hash, r]))
      return hashes.map((h) => {
        const r = byHash.get(h)
        return r && { keyId: r.key_id, keyHash: r.key_hash, revoked: r.revoked, agentId: r.id, name: r.name, displayName: r.display_name }
      })
    },
    { maxInFlight: 1, maxBatch: 200 },
  )
  return (keyHash) => lookups.submit(keyHash)
}
