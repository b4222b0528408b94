// The default channel and its memberships, written by bootstrap (users, agents, keys and
// invites go through their own modules' repositories, inside the same transaction).
import type { Db, Prisma } from '../../db/client.ts'

export function createChannel(db: Db, data: Prisma.ChannelUncheckedCreateInput) {
  return db.channel.create({ data })
}

export function addChannelMembers(db: Db, rows: Prisma.ChannelMemberCreateManyInput[]) {
  return db.channelMember.createMany({ data: rows })
}

export function createAgents(db: Db, rows: Prisma.AgentCreateManyInput[]) {
  return db.agent.createMany({ data: rows })
}

export function createApiKeys(db: Db, rows: Prisma.ApiKeyCreateManyInput[]) {
  return db.apiKey.createMany({ data: rows })
}

export function createInvites(db: Db, rows: Prisma.InviteCreateManyInput[]) {
  return db.invite.createMany({ data: rows })
}

export function createUsers(db: Db, rows: Prisma.UserCreateManyInput[]) {
  return db.user.createMany({ data: rows })
}
