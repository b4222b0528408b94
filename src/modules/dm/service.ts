// Direct messages between two users or agents. Messages go through the message endpoints; the
// access model treats a DM as a channel whose only readers are its two participants.
import type { ServiceContext } from '../context.ts'
import { channelCreated, memberJoined } from '../../events/builders.ts'
import { AppError, forbidden, notFound } from '../../lib/errors.ts'
import { uuidv7 } from '../../lib/ids.ts'
import { isObserver, type MemberPrincipal } from '../identity/principal.ts'
import { addMembersIn, findActors, lastMessageTimes, readStates } from '../channels/service.ts'
import { rememberResponse, requestHash, withIdempotency, type StoredResponse } from '../idempotency/service.ts'
import * as repo from './repo.ts'
import type { DmDto, DmListItemDto } from './schemas.ts'

/** Returns the pair's DM (200) or creates it (201); exactly one per pair even under races. */
export async function openDm(ctx: ServiceContext, principal: MemberPrincipal, participantId: string, idempotencyKey?: string): Promise<StoredResponse> {
  if (participantId === principal.id) throw new AppError('SELF_DM', 'a DM needs another participant than yourself')
  if (isObserver(principal)) throw forbidden('observers cannot start DMs')
  return withIdempotency(
    ctx.db.pool,
    principal.id,
    idempotencyKey,
    () => requestHash('POST /dm', participantId),
    async (idempotent) => {
      const actors = await findActors(ctx, [participantId, principal.id])
      const peer = actors.get(participantId)
      if (!peer) throw notFound('user or agent')
      const me = { id: principal.id, type: principal.kind === 'agent' ? ('AGENT' as const) : ('HUMAN' as const), name: principal.displayName }
      const dmKey = repo.dmKeyOf(principal.id, participantId)
      const participants = [principal.id, participantId].sort()
      const dto = (id: string, createdAt: Date): DmDto => ({
        id,
        type: 'dm',
        participants,
        participant: { id: peer.id, name: peer.name, type: peer.type },
        created_at: createdAt.toISOString(),
      })
      return ctx.events.transaction(async (tx, emit) => {
        const created = await repo.insertDm(tx, { id: uuidv7(), dmKey, createdById: principal.id })
        let result: StoredResponse
        if (created) {
          await addMembersIn(tx, [
            { channelId: created.id, memberId: me.id, memberType: me.type },
            { channelId: created.id, memberId: peer.id, memberType: peer.type },
          ])
          emit('channel.created', created.id, channelCreated(created, me))
          for (const m of [me, peer]) emit('member.joined', created.id, memberJoined(created, m))
          result = { statusCode: 201, body: dto(created.id, created.createdAt) }
        } else {
          const existing = await repo.findDmByKey(tx, dmKey)
          if (!existing) throw new AppError('CONFLICT', 'the DM was deleted while it was being opened; retry')
          result = { statusCode: 200, body: dto(existing.id, existing.createdAt) }
        }
        if (idempotent) await rememberResponse(tx, idempotent, result)
        return result
      })
    },
  )
}

export async function listDms(ctx: ServiceContext, principal: MemberPrincipal): Promise<DmListItemDto[]> {
  const dms = await repo.listDmsOf(ctx.db.prisma, principal.id)
  const ids = dms.map((d) => d.id)
  const [reads, lastTimes] = await Promise.all([readStates(ctx, principal.id, ids), lastMessageTimes(ctx, ids)])
  const peerIds = dms.map((d) => d.members.find((m) => m.memberId !== principal.id)?.memberId).filter((id): id is string => Boolean(id))
  const actors = await findActors(ctx, [...new Set(peerIds)])
  return dms.map((d) => {
    const peer = d.members.find((m) => m.memberId !== principal.id)
    const actor = peer ? actors.get(peer.memberId) : undefined
    return {
      id: d.id,
      type: 'dm' as const,
      participants: d.members.map((m) => m.memberId).sort(),
      participant: { id: peer?.memberId ?? principal.id, name: actor?.name ?? '', type: peer?.memberType ?? 'HUMAN' },
      created_at: d.createdAt.toISOString(),
      unread_count: reads.get(d.id)?.unreadCount ?? 0,
      last_read_message_id: reads.get(d.id)?.lastReadMessageId ?? null,
      last_message_at: lastTimes.get(d.id)?.toISOString() ?? null,
    }
  })
}
