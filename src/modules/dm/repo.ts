// DM channels. One per pair is guaranteed by the unique channels.dm_key (the two ids sorted and
// joined by ':'): creation is INSERT … ON CONFLICT DO NOTHING, never check-then-insert.
import type { Prisma, PrismaClient } from '../../db/client.ts'

type Db = PrismaClient | Prisma.TransactionClient

export function dmKeyOf(a: string, b: string): string {
  return [a, b].sort().join(':')
}

/** Inserts the DM channel unless the pair has one; returns the new row, or null if it existed. */
/** The new DM, or null when the pair already has one. */
export async function insertDm(
  tx: Prisma.TransactionClient,
  row: { id: string; dmKey: string; createdById: string },
): Promise<{ id: string; name: string; description: string; topic: string | null; type: 'dm'; createdAt: Date } | null> {
  const rows = await tx.$queryRaw<{ id: string; name: string; description: string; topic: string | null; created_at: Date | string }[]>`
    INSERT INTO channels (id, name, description, type, dm_key, created_by_id, created_at, updated_at)
    VALUES (${row.id}::uuid, 'dm', '', 'dm'::channel_type, ${row.dmKey}, ${row.createdById}::uuid, now(), now())
    ON CONFLICT (dm_key) DO NOTHING
    RETURNING id, name, description, topic, created_at`
  const r = rows[0]
  return r ? { id: r.id, name: r.name, description: r.description, topic: r.topic, type: 'dm', createdAt: new Date(r.created_at) } : null
}

export function findDmByKey(db: Db, dmKey: string) {
  return db.channel.findUnique({ where: { dmKey }, select: { id: true, createdAt: true } })
}

/** The caller's DMs with the other participant's id and type. */
export async function listDmsOf(db: Db, memberId: string) {
  return db.channel.findMany({
    where: { type: 'dm', members: { some: { memberId } } },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    select: { id: true, createdAt: true, members: { select: { memberId: true, memberType: true } } },
  })
}
