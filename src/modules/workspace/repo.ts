// The instance row (one per workspace) and the workspace-wide lock that serialises bootstrap
// against everything that creates users.
import type { Db, Prisma } from '../../db/client.ts'

/** pg_advisory_xact_lock key ("ams\x01"): held by bootstrap and by user-creating transactions. */
const WORKSPACE_LOCK = 1634562817

/** Takes the workspace lock until the end of the current transaction. */
export async function lockWorkspace(tx: Prisma.TransactionClient): Promise<void> {
  await tx.$queryRaw`SELECT 1 AS locked FROM (SELECT pg_advisory_xact_lock(${WORKSPACE_LOCK}::bigint)) AS l`
}

export function findInstance(db: Db) {
  return db.instance.findFirst({ orderBy: { bootstrappedAt: 'asc' } })
}

export function createInstance(db: Db, id: string) {
  return db.instance.create({ data: { id } })
}

export interface InstanceSettingsPatch {
  rateLimitPerMinute?: number | null
  registrationMode?: string
  loopGuardEnabled?: boolean
  loopGuardMaxTurns?: number
  loopGuardWindowSeconds?: number
  loopGuardMaxDepth?: number
}

export function updateInstance(db: Db, id: string, data: InstanceSettingsPatch) {
  return db.instance.update({ where: { id }, data })
}

/** The settings every request path reads (the rate limit, the loop guard); null before bootstrap. */
export function readWorkspaceSettings(db: Db) {
  return db.instance.findFirst({
    select: { rateLimitPerMinute: true, loopGuardEnabled: true, loopGuardMaxTurns: true, loopGuardWindowSeconds: true, loopGuardMaxDepth: true },
    orderBy: { bootstrappedAt: 'asc' },
  })
}
