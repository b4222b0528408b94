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

export async function updateIntegration(
  db: Db,
  id: string,
  data: Prisma.IntegrationUncheckedUpdateInput,
  agentIds?: string[],
): Promise<IntegrationWithAgents> {
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

export async function mayActFor(db: Db, integrationId: string, agentId: string): Promise<{ id: string; name: string; displayName: string } | null> {
  const link = await db.integrationAgent.findUnique({
    where: { integrationId_agentId: { integrationId, agentId } },
    select: { agent: { select: { id: true, name: true, displayName: true } } },
  })
  return link?.agent ?? null
}
