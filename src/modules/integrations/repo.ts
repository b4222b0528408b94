// Integrations and the agents they may act for.
import type { Prisma, PrismaClient } from '../../db/client.ts'
import type { Integration } from '../../generated/prisma/client.ts'

type Db = PrismaClient | Prisma.TransactionClient

export type IntegrationWithAgents = Integration & { agents: { agentId: string }[] }

const withAgents = { agents: { select: { agentId: true }, orderBy: { agentId: 'asc' } } } as const

export function createIntegration(db: Db, data: Prisma.IntegrationUncheckedCreateInput, agentIds: string[]): Promise<IntegrationWithAgents> {
  return db.integration.create({
    data: { ...data, agents: { create: agentIds.map((agentId) => ({ agentId })) } },
    include: withAgents,
  })
}

export function listIntegrations(db: Db): Promise<IntegrationWithAgents[]> {
  return db.integration.findMany({ orderBy: { id: 'asc' }, include: withAgents })
}

export function findIntegration(db: Db, id: string): Promise<IntegrationWithAgents | null> {
  return db.integration.findUnique({ where: { id }, include: withAgents })
}

export async function updateIntegration(db: Db, id: string, data: Prisma.IntegrationUncheckedUpdateInput, agentIds?: string[]): Promise<IntegrationWithAgents> {
  return db.integration.update({
    where: { id },
    data: { ...data, ...(agentIds ? { agents: { deleteMany: {}, create: agentIds.map((agentId) => ({ agentId })) } } : {}) },
    include: withAgents,
  })
}

export async function deleteIntegration(db: Db, id: string): Promise<boolean> {
  const { count } = await db.integration.deleteMany({ where: { id } })
  return count > 0
}

/** The ids among `ids` that are not agents. */
export async function unknownAgents(db: Db, ids: string[]): Promise<string[]> {
  if (!ids.length) return []
  const found = await db.agent.findMany({ where: { id: { in: ids } }, select: { id: true } })
  const known = new Set(found.map((a) => a.id))
  return ids.filter((id) => !known.has(id))
}

type ActingAgent = { id: string; name: string; displayName: string }

const agentFields = { id: true, name: true, displayName: true } as const

/**
 * The agent `agentId` as the integration may act for it: any existing agent when it was given no
 * agent list (`all_agents`, `restricted: false`), otherwise only one on its list (which may have
 * become empty when its agents were deleted: then none).
 */
export async function actingAgent(db: Db, integrationId: string, agentId: string): Promise<{ restricted: boolean; agent: ActingAgent | null }> {
  const integration = await db.integration.findUnique({
    where: { id: integrationId },
    select: { allAgents: true, agents: { where: { agentId }, select: { agent: { select: agentFields } } } },
  })
  if (!integration) return { restricted: true, agent: null }
  if (!integration.allAgents) return { restricted: true, agent: integration.agents[0]?.agent ?? null }
  return { restricted: false, agent: await db.agent.findUnique({ where: { id: agentId }, select: agentFields }) }
}

/** The integration whose key hashes to `keyHash` (authentication), or null. */
export function findByKeyHash(db: Db, keyHash: string): Promise<{ id: string; keyHash: string } | null> {
  return db.integration.findUnique({ where: { keyHash }, select: { id: true, keyHash: true } })
}
