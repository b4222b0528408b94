// Invite tokens (stored as SHA-256) and the activation of the invited user.
import type { Db, Prisma } from '../../db/client.ts'

export function findInviteByHash(db: Db, tokenHash: string) {
  return db.invite.findUnique({ where: { tokenHash }, include: { user: true } })
}

export function createInvite(db: Db, data: Prisma.InviteUncheckedCreateInput) {
  return db.invite.create({ data })
}

/** Open invites of people who have not accepted yet, newest first, with the person. */
export function listOpenInvites(db: Db) {
  return db.invite.findMany({
    where: { consumedAt: null, user: { status: 'invited' } },
    include: { user: true },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
  })
}

/** Invites of a user not yet accepted (replaced when the owner invites the same person again). */
export function deleteOpenInvites(db: Db, userId: string) {
  return db.invite.deleteMany({ where: { userId, consumedAt: null } })
}

/**
 * Marks the invite consumed if, at this instant, it is neither consumed nor expired. One
 * conditional UPDATE: of two concurrent accepts exactly one sees count 1.
 */
export async function consumeInvite(db: Db, id: string, now: Date): Promise<boolean> {
  const { count } = await db.invite.updateMany({ where: { id, consumedAt: null, expiresAt: { gt: now } }, data: { consumedAt: now } })
  return count === 1
}

export function findInvite(db: Db, id: string) {
  return db.invite.findUnique({ where: { id } })
}

export function activateUser(db: Db, userId: string, passwordHash: string, displayName?: string) {
  return db.user.update({
    where: { id: userId },
    data: { passwordHash, status: 'active', ...(displayName ? { displayName } : {}) },
  })
}

export function updateInvitedUser(db: Db, userId: string, data: { displayName: string; role: 'member' | 'observer' }) {
  return db.user.update({ where: { id: userId }, data })
}
