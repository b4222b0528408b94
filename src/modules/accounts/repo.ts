// Users (humans): lookups and the register insert.
import type { Db, Prisma } from '../../db/client.ts'

export function findUserByEmail(db: Db, email: string) {
  return db.user.findUnique({ where: { email } })
}

export function findUserById(db: Db, id: string) {
  return db.user.findUnique({ where: { id } })
}

export async function countUsers(db: Db): Promise<number> {
  return db.user.count()
}

export function createUser(db: Db, data: Prisma.UserUncheckedCreateInput) {
  return db.user.create({ data })
}

/** Humans with an active account: invited people who have not accepted and registrations awaiting approval are left out. */
export function listActiveUsers(db: Db) {
  return db.user.findMany({ where: { status: 'active', awaitingApproval: false }, orderBy: [{ displayName: 'asc' }, { id: 'asc' }] })
}

export function listAwaitingApproval(db: Db) {
  return db.user.findMany({ where: { awaitingApproval: true }, orderBy: { createdAt: 'asc' } })
}

/** Changes a user's profile (and password: `passwordHash` with `newSession` ends every older session). */
export function updateProfile(db: Db, id: string, data: { displayName?: string; avatarUrl?: string | null; passwordHash?: string }) {
  return db.user.update({
    where: { id },
    data: { ...data, ...(data.passwordHash ? { sessionVersion: { increment: 1 } } : {}) },
  })
}

/** Approves an account awaiting approval; null when there is no such account. */
export async function approveUser(db: Db, id: string) {
  const { count } = await db.user.updateMany({ where: { id, awaitingApproval: true }, data: { awaitingApproval: false } })
  return count ? db.user.findUnique({ where: { id } }) : null
}

/** Deletes an account awaiting approval (a refused registration); false when there is none. */
export async function deleteAwaitingUser(db: Db, id: string): Promise<boolean> {
  const { count } = await db.user.deleteMany({ where: { id, awaitingApproval: true } })
  return count > 0
}
