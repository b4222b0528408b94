// Who an event is addressed to (docs/realtime.md, "Addressed events"), computed once when it is
// emitted and carried by the event (`DomainEvent.addressed`), so that every filter, the planner of
// webhooks and integrations and the inbox read the same answer:
// - a message in a DM: the other participant (`dm`);
// - a message that mentions members: those it notifies (`mention`; the author never);
// - a reply in a thread: everyone who started or posted in the thread before (`thread_reply`);
// - a reaction: the author of the message reacted to (`reaction`), unless they reacted themselves.
// A member addressed for several reasons is listed once, with the first of mention, dm,
// thread_reply. Access is not decided here: delivery still checks membership.
import type { ServiceContext } from '../context.ts'
import type { Addressed, AddressKind } from '../../events/types.ts'
import * as repo from './repo.ts'

/** Channel ids → their DM participants, or null for a regular channel (a channel's type never changes). */
const dmCache = new Map<string, string[] | null>()
const DM_CACHE_MAX = 20_000

/** The addressed map of these members, in order of precedence (the first reason wins); undefined when empty. */
export function addressedMap(author: string, reasons: [AddressKind, readonly string[]][]): Addressed | undefined {
  const out: Addressed = {}
  let any = false
  for (const [kind, ids] of reasons) {
    for (const id of ids) {
      if (id === author || out[id] !== undefined) continue
      out[id] = kind
      any = true
    }
  }
  return any ? out : undefined
}

/** Whom a new message is addressed to: mentioned (notified) members, the DM's peer, the thread's participants. */
export async function addressedPost(ctx: ServiceContext, post: { channelId: string; authorId: string; threadId: string | null; notify: readonly string[] }): Promise<Addressed | undefined> {
  const cached = dmCache.get(post.channelId)
  let dmMembers: string[] | null
  let threadAuthors: string[] = []
  if (cached !== undefined && !post.threadId) {
    dmMembers = cached
  } else {
    const found = await repo.conversationOf(ctx.db.pool, post.channelId, post.threadId)
    dmMembers = found.dmMembers
    threadAuthors = found.threadAuthors
    if (dmCache.size >= DM_CACHE_MAX) dmCache.clear()
    if (found.exists) dmCache.set(post.channelId, dmMembers)
  }
  return addressedMap(post.authorId, [
    ['mention', post.notify],
    ['dm', dmMembers ?? []],
    ['thread_reply', threadAuthors],
  ])
}

/**
 * `addressedPost` in two steps, for a post whose mentions are known only inside its transaction
 * (a stream's end): the conversation is read now, the map is made later without a query.
 */
export async function addressedPostResolver(
  ctx: ServiceContext,
  post: { channelId: string; authorId: string; threadId: string | null },
): Promise<(notify: readonly string[]) => Addressed | undefined> {
  const found = await repo.conversationOf(ctx.db.pool, post.channelId, post.threadId)
  return (notify) =>
    addressedMap(post.authorId, [
      ['mention', notify],
      ['dm', found.dmMembers ?? []],
      ['thread_reply', found.threadAuthors],
    ])
}

/** Whom an edit is addressed to: the members it mentions for the first time. */
export const addressedEdit = (authorId: string, notify: readonly string[]): Addressed | undefined => addressedMap(authorId, [['mention', notify]])

/** Whom a reaction is addressed to: the message's author, unless it is the reactor. */
export const addressedReaction = (reactorId: string, messageAuthorId: string | null): Addressed | undefined =>
  messageAuthorId ? addressedMap(reactorId, [['reaction', [messageAuthorId]]]) : undefined
