// Channels and their members. Every rule about who may do what is in ./access.ts; this file
// applies them and records the changes with their domain events (channel.*, member.*).
import type { ServiceContext } from '../context.ts'
import { channelCreated, eventChannel, memberJoined } from '../../events/builders.ts'
import type { Tx } from '../../events/bus.ts'
import { AppError, forbidden, notFound } from '../../lib/errors.ts'
import { uuidv7 } from '../../lib/ids.ts'
import { isObserver, isOwner, type MemberPrincipal } from '../identity/principal.ts'
import { rememberResponse, requestHash, withIdempotency, type StoredResponse } from '../idempotency/service.ts'
import { acknowledgeRead } from '../inbox/service.ts'
import { removeFiles } from '../messages/files.ts'
import { leftChannel } from '../streams/live.ts'
import { assertCanAddMember, assertCanManage, assertCanRemoveMember, canJoin, readableChannel } from './access.ts'
import * as repo from './repo.ts'
import type { ChannelRow } from './repo.ts'
import type { AddedMemberDto, ChannelDto, ChannelListItemDto, CreateChannelInput, MemberDto, PublicChannelDto, ReadStateDto, UpdateChannelInput } from './schemas.ts'

const nameTaken = (name: string): AppError => new AppError('NAME_TAKEN', `a channel named '${name}' already exists`)
const actorType = (p: MemberPrincipal): 'AGENT' | 'HUMAN' => (p.kind === 'agent' ? 'AGENT' : 'HUMAN')

export async function toChannelDto(ctx: ServiceContext, c: ChannelRow, isMember: boolean): Promise<ChannelDto> {
  const members = await repo.listMembers(ctx.db.prisma, c.id)
  return {
    id: c.id,
    name: c.name,
    description: c.description,
    topic: c.topic,
    type: c.type,
    private: c.type === 'dm' || c.private,
    created_at: c.createdAt.toISOString(),
    updated_at: c.updatedAt.toISOString(),
    created_by: c.createdById,
    member_count: members.length,
    is_member: isMember,
    ...(c.type === 'dm' ? { participants: members.map((m) => m.memberId).sort() } : {}),
  }
}

export async function createChannel(ctx: ServiceContext, principal: MemberPrincipal, input: CreateChannelInput, idempotencyKey?: string): Promise<StoredResponse> {
  if (isObserver(principal)) throw forbidden('observers cannot create channels')
  const name = input.name.trim()
  return withIdempotency(
    ctx.db.pool,
    principal.id,
    idempotencyKey,
    () => requestHash('POST /channels', input),
    async (idempotent) => {
      const dto = await ctx.events.transaction(async (tx, emit) => {
        await repo.lockChannelNames(tx)
        if (await repo.findChannelNamed(tx, name)) throw nameTaken(name)
        const channel = await repo.createChannel(tx, {
          id: uuidv7(),
          name,
          description: input.description ?? '',
          topic: input.topic?.trim() || null,
          type: 'channel',
          private: input.private ?? false,
          createdById: principal.id,
        })
        await repo.addMember(tx, channel.id, principal.id, actorType(principal))
        emit('channel.created', channel.id, channelCreated(channel, { id: principal.id, type: actorType(principal) }))
        emit('member.joined', channel.id, memberJoined(channel, { id: principal.id, type: actorType(principal), name: principal.displayName }))
        const body: ChannelDto = {
          id: channel.id,
          name: channel.name,
          description: channel.description,
          topic: channel.topic,
          type: 'channel',
          private: channel.private,
          created_at: channel.createdAt.toISOString(),
          updated_at: channel.updatedAt.toISOString(),
          created_by: principal.id,
          member_count: 1,
          is_member: true,
        }
        if (idempotent) await rememberResponse(tx, idempotent, { statusCode: 201, body })
        return body
      })
      return { statusCode: 201, body: dto }
    },
  )
}

/** The caller's channels and DMs, as the JSON text of ChannelListSchema; for the workspace owner also every regular channel. */
export function listChannelsJson(ctx: ServiceContext, principal: MemberPrincipal): Promise<string> {
  return repo.sidebarJson(ctx.db.pool, principal.id, isOwner(principal))
}

/** The caller's channels and DMs; for the workspace owner also every regular channel. */
export async function listChannels(ctx: ServiceContext, principal: MemberPrincipal): Promise<ChannelListItemDto[]> {
  return JSON.parse(await listChannelsJson(ctx, principal)) as ChannelListItemDto[]
}

/** Moves the caller's read marker (members only: the owner reading a channel it has not joined gets 403). */
export async function markRead(ctx: ServiceContext, principal: MemberPrincipal, channelId: string, messageId: string): Promise<ReadStateDto> {
  const access = await readableChannel(ctx, principal, channelId)
  if (!access.member) throw forbidden('only members keep a read marker; join the channel first')
  const marked = await repo.markRead(ctx.db.pool, channelId, principal.id, messageId)
  if (!marked) throw notFound('message')
  await acknowledgeRead(ctx, principal, channelId, marked)
  const state = (await repo.readStates(ctx.db.pool, principal.id, [channelId])).get(channelId)
  return { channel_id: channelId, last_read_message_id: marked, unread_count: state?.unreadCount ?? 0 }
}

export async function getChannel(ctx: ServiceContext, principal: MemberPrincipal, channelId: string): Promise<ChannelDto> {
  const access = await readableChannel(ctx, principal, channelId)
  return toChannelDto(ctx, access.channel, access.member)
}

export async function updateChannel(ctx: ServiceContext, principal: MemberPrincipal, channelId: string, input: UpdateChannelInput): Promise<ChannelDto> {
  const access = await readableChannel(ctx, principal, channelId)
  await assertCanManage(ctx, principal, access)
  const name = input.name?.trim()
  const updated = await ctx.events.transaction(async (tx, emit) => {
    if (name !== undefined) {
      await repo.lockChannelNames(tx)
      if (await repo.findChannelNamed(tx, name, channelId)) throw nameTaken(name)
    }
    // An empty topic clears it, like null (the body parser may coerce null to '').
    const topic = input.topic === undefined ? undefined : input.topic?.trim() || null
    const channel = await repo.updateChannel(tx, channelId, { name, description: input.description, topic, private: input.private })
    emit('channel.updated', channelId, { channel: eventChannel(channel) })
    return channel
  })
  return toChannelDto(ctx, updated, access.member)
}

/** Deletes the channel, its memberships, its messages and their files. */
export async function deleteChannel(ctx: ServiceContext, principal: MemberPrincipal, channelId: string): Promise<void> {
  const access = await readableChannel(ctx, principal, channelId)
  await assertCanManage(ctx, principal, access)
  const files = await ctx.events.transaction(async (tx, emit) => {
    const members = await repo.listMembers(tx, channelId)
    const storageNames = await repo.attachmentFilesOf(tx, channelId)
    await repo.deleteChannel(tx, channelId)
    emit(
      'channel.deleted',
      channelId,
      { channel_id: channelId },
      members.map((m) => m.memberId),
    )
    return storageNames
  })
  await removeFiles(ctx.config.uploadDir, files).catch((err: unknown) => ctx.log.warn({ err, channelId }, 'could not remove files of a deleted channel'))
}

export async function listMembers(ctx: ServiceContext, principal: MemberPrincipal, channelId: string): Promise<MemberDto[]> {
  await readableChannel(ctx, principal, channelId)
  const members = await repo.listMembers(ctx.db.prisma, channelId)
  const actors = await repo.findActors(
    ctx.db.prisma,
    members.map((m) => m.memberId),
  )
  return members.map((m) => ({
    id: m.memberId,
    user_id: m.memberId,
    type: m.memberType,
    name: actors.get(m.memberId)?.name ?? '',
    joined_at: m.joinedAt.toISOString(),
  }))
}

export async function addMember(ctx: ServiceContext, principal: MemberPrincipal, channelId: string, memberId: string): Promise<AddedMemberDto> {
  const access = await readableChannel(ctx, principal, channelId)
  await assertCanAddMember(ctx, principal, access)
  const actor = (await repo.findActors(ctx.db.prisma, [memberId])).get(memberId)
  if (!actor) throw notFound('user or agent')
  try {
    return await ctx.events.transaction(async (tx, emit) => {
      if (await repo.findMember(tx, channelId, memberId)) throw alreadyMember()
      const row = await repo.addMember(tx, channelId, memberId, actor.type)
      emit('member.joined', channelId, memberJoined(access.channel, actor))
      return { channel_id: channelId, id: memberId, user_id: memberId, type: actor.type, name: actor.name, joined_at: row.joinedAt.toISOString() }
    })
  } catch (error) {
    const code = (error as { code?: string }).code
    if (code === 'P2002') throw alreadyMember()
    if (code === 'P2003') throw notFound('channel') // deleted meanwhile
    throw error
  }
}

/** The channel browser: public channels, with whether the caller is in each. */
export async function browseChannels(ctx: ServiceContext, principal: MemberPrincipal, query: string | undefined): Promise<PublicChannelDto[]> {
  const rows = await repo.listPublicChannels(ctx.db.pool, principal.id, query?.trim() || undefined)
  return rows.map((r) => ({ ...r, created_at: r.created_at.toISOString() }))
}

/** Joins a public channel (or one the caller reads already); private channels answer 404. */
export async function joinChannel(ctx: ServiceContext, principal: MemberPrincipal, channelId: string): Promise<AddedMemberDto> {
  const found = await repo.findChannelFor(ctx.db.pool, channelId, principal.id)
  if (!found || !canJoin(principal, found.channel, found.member)) throw notFound('channel')
  if (found.member) throw alreadyMember()
  const me = { id: principal.id, type: actorType(principal), name: principal.displayName }
  try {
    return await ctx.events.transaction(async (tx, emit) => {
      const row = await repo.addMember(tx, channelId, me.id, me.type)
      emit('member.joined', channelId, memberJoined(found.channel, me))
      return { channel_id: channelId, id: me.id, user_id: me.id, type: me.type, name: me.name, joined_at: row.joinedAt.toISOString() }
    })
  } catch (error) {
    const code = (error as { code?: string }).code
    if (code === 'P2002') throw alreadyMember()
    if (code === 'P2003') throw notFound('channel')
    throw error
  }
}

/** Makes the workspace owner a member before its first post in a channel (member.joined). */
export async function joinOnPost(ctx: ServiceContext, principal: MemberPrincipal, channel: ChannelRow): Promise<void> {
  const channelId = channel.id
  try {
    await ctx.events.transaction(async (tx, emit) => {
      if (await repo.findMember(tx, channelId, principal.id)) return
      await repo.addMember(tx, channelId, principal.id, actorType(principal))
      emit('member.joined', channelId, memberJoined(channel, { id: principal.id, type: actorType(principal), name: principal.displayName }))
    })
  } catch (error) {
    const code = (error as { code?: string }).code
    if (code === 'P2002') return // joined concurrently
    if (code === 'P2003') throw notFound('channel')
    throw error
  }
}

const alreadyMember = (): AppError => new AppError('ALREADY_MEMBER', 'already a member of this channel')

/** Removes a member (or the caller leaves); access ends with the commit. */
export async function removeMember(ctx: ServiceContext, principal: MemberPrincipal, channelId: string, memberId: string): Promise<void> {
  const access = await readableChannel(ctx, principal, channelId)
  const row = await repo.findMember(ctx.db.prisma, channelId, memberId)
  if (!row) throw notFound('member')
  await assertCanRemoveMember(ctx, principal, access, memberId)
  await ctx.events.transaction(async (tx, emit) => {
    const { count } = await repo.removeMember(tx, channelId, memberId)
    if (count === 0) throw notFound('member')
    emit('member.left', channelId, { channel_id: channelId, member_id: memberId, member_type: row.memberType }, [memberId])
  })
  // Its streams here take no more appends (they end by the idle sweep, or by their agent).
  await leftChannel(ctx, channelId, memberId)
}

// For the DM module (a DM is a channel): users and agents by id, read states, and members added
// in the caller's transaction.

/** Users and agents by id (a member id may name either). */
export function findActors(ctx: ServiceContext, ids: string[]): Promise<Map<string, repo.Actor>> {
  return repo.findActors(ctx.db.prisma, ids)
}

/** When each channel's newest message was posted (absent: none). */
export function lastMessageTimes(ctx: ServiceContext, channelIds: string[]): Promise<Map<string, Date>> {
  return repo.lastMessageTimes(ctx.db.pool, channelIds)
}

/** The caller's unread count and last read message in each of these channels. */
export function readStates(ctx: ServiceContext, memberId: string, channelIds: string[]): Promise<Map<string, repo.ReadState>> {
  return repo.readStates(ctx.db.pool, memberId, channelIds)
}

/** Adds members inside the caller's transaction (no events: the caller emits them). */
export async function addMembersIn(tx: Tx, rows: { channelId: string; memberId: string; memberType: 'AGENT' | 'HUMAN' }[]): Promise<void> {
  await repo.addMembers(tx, rows)
}
