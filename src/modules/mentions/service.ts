// Mentions: resolving who a message mentions when it is posted or edited, and the caller's list
// of mentions. Rules: docs/decisions.md, "Mentions". Only members of the channel can be
// mentioned; anything else (a name or id of a non-member, existing or not) is dropped silently,
// so a post reveals nothing about who exists outside the channel.
import type { ServiceContext } from '../context.ts'
import { resolveMentions, uniqueIds, type Mentionable } from '../../lib/mentions.ts'
import * as repo from './repo.ts'

/** Who a message mentions, and whom the post or edit notifies. */
export interface ResolvedMentions {
  /** Every member mentioned, in order (the message's `mentions`). */
  ids: string[]
  /** Those to notify (`message.mentioned`): the mentioned minus the author (and, on an edit, minus those mentioned before). */
  notify: string[]
  /** The agents among `notify`. */
  notifyAgents: string[]
}

const NONE: ResolvedMentions = { ids: [], notify: [], notifyAgents: [] }

/** What a text and explicit ids give against the channel's members. */
function resolve(members: Mentionable[], text: string, explicit: readonly string[]): string[] {
  const memberIds = new Set(members.map((m) => m.id))
  return uniqueIds([...resolveMentions(text, members), ...explicit.filter((id) => memberIds.has(id))])
}

function notifying(members: Mentionable[], ids: string[], skip: (id: string) => boolean): ResolvedMentions {
  const notify = ids.filter((id) => !skip(id))
  const agents = new Set(members.filter((m) => m.type === 'AGENT').map((m) => m.id))
  return { ids, notify, notifyAgents: notify.filter((id) => agents.has(id)) }
}

/** Mentions of a new message. No `@` and no explicit ids: nothing to look up. */
export async function mentionsForPost(ctx: ServiceContext, channelId: string, authorId: string, text: string, explicit: readonly string[] = []): Promise<ResolvedMentions> {
  if (!explicit.length && !text.includes('@')) return NONE
  const members = await repo.channelMentionables(ctx, channelId)
  return notifying(members, resolve(members, text, explicit), (id) => id === authorId)
}

/**
 * Mentions of a message whose final text is known only later, inside a transaction (a stream's
 * end): the channel's members are read now, so resolving the text later needs no second
 * connection while the transaction holds one (twenty streams ending at once would otherwise
 * take every pooled connection and wait for a twenty-first).
 */
export async function mentionResolverFor(ctx: ServiceContext, channelId: string, authorId: string): Promise<(text: string) => ResolvedMentions> {
  const members = await repo.channelMentionables(ctx, channelId)
  return (text) => (text.includes('@') ? notifying(members, resolve(members, text, []), (id) => id === authorId) : NONE)
}

/**
 * Mentions of an edited message: the new text's tokens, then the explicit ids (given again, or
 * else those of before that the old text did not name). Only the newly mentioned are notified.
 */
export async function mentionsForEdit(
  ctx: ServiceContext,
  channelId: string,
  before: { authorId: string; text: string; mentions: string[] },
  text: string,
  explicit: readonly string[] | undefined,
): Promise<ResolvedMentions> {
  if (explicit === undefined && !before.mentions.length && !text.includes('@')) return NONE
  const members = await repo.channelMentionables(ctx, channelId)
  const fromOldText = new Set(resolveMentions(before.text, members))
  const kept = explicit ?? before.mentions.filter((id) => !fromOldText.has(id))
  const old = new Set(before.mentions)
  return notifying(members, resolve(members, text, kept), (id) => id === before.authorId || old.has(id))
}
