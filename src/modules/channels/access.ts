// The access model (docs/access.md), enforced here and only here. Who may see a channel, post
// in it, manage it and its members. A channel the caller may not see is reported exactly like
// one that does not exist (404); 403 is for a visible channel whose action is not allowed.
import type { ServiceContext } from '../context.ts'
import { forbidden, notFound } from '../../lib/errors.ts'
import { isHumanAdmin, isObserver, isOwner, type MemberPrincipal } from '../identity/principal.ts'
import * as repo from './repo.ts'
import type { ChannelRow } from './repo.ts'

/** Whether `memberId` (a user or an agent) belongs to the channel. */
export function isMember(ctx: ServiceContext, channelId: string, memberId: string): Promise<boolean> {
  return repo.isMember(ctx.db.pool, channelId, memberId)
}

/** Ids of the channel's members (users and agents). */
export function memberIds(ctx: ServiceContext, channelId: string): Promise<string[]> {
  return repo.memberIds(ctx.db.pool, channelId)
}

/**
 * Ids of the channels `memberId` belongs to. The workspace owner's read access to every channel
 * is not membership: realtime delivery follows membership only.
 */
export function channelIdsOf(ctx: ServiceContext, memberId: string): Promise<string[]> {
  return repo.channelIdsOf(ctx.db.pool, memberId)
}

/**
 * The channels whose events `memberId` receives (WebSocket, event streams, GET /events): its
 * own, and for the workspace owner every regular channel, since it reads them all
 * (docs/decisions.md, "Live sidebar"). `readsAllRegular` says the second applies.
 */
export function liveChannelsOf(ctx: ServiceContext, memberId: string): Promise<{ channelIds: string[]; readsAllRegular: boolean }> {
  return repo.liveChannelsOf(ctx.db.pool, memberId)
}

export interface ChannelAccess {
  channel: ChannelRow
  /** The caller is a member (not merely the owner reading). */
  member: boolean
}

/** Members see their channels; the workspace owner also sees every regular channel (not others' DMs). */
export function canRead(principal: MemberPrincipal, channel: ChannelRow, member: boolean): boolean {
  return member || (isOwner(principal) && channel.type === 'channel')
}

/**
 * Joining by oneself (the channel browser): a public regular channel, or any channel the caller
 * may read already (the owner, a private channel it reads). Private ones stay hidden: 404.
 */
export function canJoin(principal: MemberPrincipal, channel: ChannelRow, member: boolean): boolean {
  if (channel.type !== 'channel') return member
  return !channel.private || canRead(principal, channel, member)
}

/** The channel if the caller may read it; otherwise 404, as for an unknown id. */
export async function readableChannel(ctx: ServiceContext, principal: MemberPrincipal, channelId: string): Promise<ChannelAccess> {
  const found = await repo.findChannelFor(ctx.db.pool, channelId, principal.id)
  if (!found || !canRead(principal, found.channel, found.member)) throw notFound('channel')
  return found
}

/**
 * Posting: members only, never observers (403). The workspace owner may post in any regular
 * channel; the first post there makes it a member (see `joinsOnPost`).
 */
export function assertCanPost(principal: MemberPrincipal, access: ChannelAccess): void {
  if (isObserver(principal)) throw forbidden('observers can read but not post')
  if (!access.member && !joinsOnPost(principal, access)) throw forbidden('join the channel to post in it')
}

/** The owner posting in a regular channel it has not joined joins it first. */
export function joinsOnPost(principal: MemberPrincipal, access: ChannelAccess): boolean {
  return !access.member && isOwner(principal) && access.channel.type === 'channel'
}

/** Admins: human users with role admin (the workspace owner) and the primary agent. */
export async function isAdmin(ctx: ServiceContext, principal: MemberPrincipal): Promise<boolean> {
  if (principal.kind === 'human') return isHumanAdmin(principal)
  return repo.isPrimaryAgent(ctx.db.prisma, principal.id)
}

/** Renaming or deleting a channel: its creator or an admin; never a DM. */
export async function assertCanManage(ctx: ServiceContext, principal: MemberPrincipal, access: ChannelAccess): Promise<void> {
  if (access.channel.type === 'dm') throw forbidden('a DM cannot be changed or deleted')
  if (isObserver(principal)) throw forbidden('observers cannot change channels')
  if (access.channel.createdById === principal.id) return
  if (await isAdmin(ctx, principal)) return
  throw forbidden('only the channel creator or an admin may do this')
}

/** Adding a member: any member who may post, or an admin; a DM keeps its two participants. */
export async function assertCanAddMember(ctx: ServiceContext, principal: MemberPrincipal, access: ChannelAccess): Promise<void> {
  if (access.channel.type === 'dm') throw forbidden('a DM has exactly its two participants')
  if (isObserver(principal)) throw forbidden('observers cannot add members')
  if (access.member) return
  if (await isAdmin(ctx, principal)) return
  throw forbidden('join the channel to add members')
}

/** Removing a member: anyone may leave; removing someone else takes the creator or an admin. */
export async function assertCanRemoveMember(ctx: ServiceContext, principal: MemberPrincipal, access: ChannelAccess, memberId: string): Promise<void> {
  if (access.channel.type === 'dm') throw forbidden('a DM has exactly its two participants')
  if (memberId === principal.id) return
  if (isObserver(principal)) throw forbidden('observers cannot remove members')
  if (access.channel.createdById === principal.id) return
  if (await isAdmin(ctx, principal)) return
  throw forbidden('only the channel creator or an admin may remove other members')
}
