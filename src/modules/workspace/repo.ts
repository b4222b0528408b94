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

export async function readRateLimitSetting(db: Db): Promise<number | null> {
  const instance = await db.instance.findFirst({ select: { rateLimitPerMinute: true }, orderBy: { bootstrappedAt: 'asc' } })
  return instance?.rateLimitPerMinute ?? null
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

export function readLoopGuardSettings(db: Db) {
  return db.instance.findFirst({
    select: { loopGuardEnabled: true, loopGuardMaxTurns: true, loopGuardWindowSeconds: true, loopGuardMaxDepth: true },
    orderBy: { bootstrappedAt: 'asc' },
  })
}
