// Reactions (docs/decisions.md, "Reactions"): members who may post add and remove their own
// reactions; adding twice is one reaction, removing an absent one is not an error. Each change
// emits `reaction.added` / `reaction.removed` with the emoji's new count; a repeat emits nothing.
import type { ServiceContext } from '../context.ts'
import { AppError, forbidden, notFound } from '../../lib/errors.ts'
import { isObserver, type MemberPrincipal } from '../identity/principal.ts'
import { readableChannel } from '../channels/access.ts'
import { addressedReaction } from '../inbox/addressed.ts'
import type { MessageDto } from '../../schemas/message.ts'
import { isReactionEmoji } from './emoji.ts'
import * as repo from './repo.ts'
import type { MessageReactions } from './schemas.ts'

/** Fills in `reactions` of messages as `viewerId` sees them (one query for the whole list). */
export async function withReactions<T extends MessageDto>(ctx: ServiceContext, messages: T[], viewerId: string | null): Promise<T[]> {
  const byMessage = await repo.summaries(
    ctx,
    messages.map((m) => m.id),
    viewerId,
  )
  for (const m of messages) m.reactions = byMessage.get(m.id) ?? []
  return messages
}

/** Adds (`add`) or removes the caller's reaction. */
export async function setReaction(ctx: ServiceContext, principal: MemberPrincipal, channelId: string, messageId: string, emoji: string, add: boolean): Promise<MessageReactions> {
  const access = await readableChannel(ctx, principal, channelId)
  if (!isReactionEmoji(emoji)) throw new AppError('INVALID_EMOJI', "'emoji' must be one emoji (e.g. 👀) or a :shortcode:")
  if (isObserver(principal)) throw forbidden('observers can read but not react')
  if (!access.member) throw forbidden('join the channel to react in it')
  const memberType = principal.kind === 'agent' ? 'AGENT' : 'HUMAN'
  const memberName = principal.displayName
  try {
    await ctx.events.transaction(async (tx, emit) => {
      const target = await repo.lockMessage(tx, channelId, messageId)
      if (!target) throw notFound('message')
      const key = { messageId, memberId: principal.id, emoji }
      const changed = add ? await repo.addReaction(tx, { ...key, memberType }) : await repo.removeReaction(tx, key)
      if (!changed) return
      const count = await repo.countEmoji(tx, messageId, emoji)
      const payload = { channel_id: channelId, message_id: messageId, emoji, member_id: principal.id, member_type: memberType, member_name: memberName, count } as const
      if (!add) {
        emit('reaction.removed', channelId, payload)
        return
      }
      const added = emit('reaction.added', channelId, payload)
      const addressed = addressedReaction(principal.id, target.authorId)
      if (addressed) added.addressed = addressed
    })
  } catch (error) {
    if ((error as { code?: string }).code === 'P2003') throw notFound('message') // deleted meanwhile
    throw error
  }
  const byMessage = await repo.summaries(ctx, [messageId], principal.id)
  return { channel_id: channelId, message_id: messageId, reactions: byMessage.get(messageId) ?? [] }
}
