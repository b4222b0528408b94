// Agents, their API keys, and the agent's channel memberships (removed with the agent).
import type { Prisma } from '../../db/client.ts'
import { Prisma as PrismaValues } from '../../generated/prisma/client.ts'
import type { Db } from '../workspace/repo.ts'

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
