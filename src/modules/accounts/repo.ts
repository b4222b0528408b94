// Users (humans): lookups and the register insert.
import type { Prisma } from '../../db/client.ts'
import type { Db } from '../workspace/repo.ts'

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
