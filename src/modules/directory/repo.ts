// Reads for the directory: agents and the humans who belong to the workspace.
import type { Prisma, PrismaClient } from '../../db/client.ts'

type Db = PrismaClient | Prisma.TransactionClient

export function listAgents(db: Db) {
  return db.agent.findMany({ select: { id: true, name: true, displayName: true, avatarUrl: true, isPrimary: true, lastSeenAt: true, statusText: true, statusExpiresAt: true } })
}

/** Humans of the workspace: active or invited; self-registered accounts awaiting approval are not in it yet. */
export function listHumans(db: Db) {
  return db.user.findMany({
    where: { awaitingApproval: false },
    select: { id: true, displayName: true, avatarUrl: true, role: true, isOwner: true, status: true, lastSeenAt: true },
  })
}
