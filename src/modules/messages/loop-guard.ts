// Loop protection (docs/loops.md): two checks on every message an agent posts, whichever way it
// posts (REST JSON or multipart, WebSocket, the integration inbound endpoint, MCP), because all of
// them go through createMessage.
//
// 1. The window guard: agents alone (no human message in between) may post at most
//    `loop_guard_max_messages` messages in one conversation (a channel, or one thread of it:
//    a reply counts in its thread) within `loop_guard_window_seconds`. The state is one row per conversation in
//    PostgreSQL, updated under a row lock, so the count is exact across servers.
// 2. The chain cap: a message posted `in_reply_to_event` of an agent's message is one deeper than
//    it; beyond `loop_guard_max_depth` the post is refused. A human's message is depth 0.
// Both refusals are 429 LOOP_DETECTED with Retry-After.
import type { FastifyInstance } from 'fastify'
import { AppError } from '../../lib/errors.ts'
import type { MemberPrincipal } from '../../plugins/auth.ts'
import type { LoopGuardSettings } from '../workspace/settings.ts'
import * as repo from './repo.ts'

/** Where the count is kept: a channel's top level, or one thread of it. */
export interface Conversation {
  channelId: string
  threadId: string | null
}

/** The conversation a message counts in: its thread when it is a reply, else its channel. */
export function conversationOf(channelId: string, threadId: string | null | undefined): Conversation {
  return { channelId, threadId: threadId ?? null }
}

/** An admitted agent message, to take back if it is not stored after all. */
export interface Admission {
  release(): Promise<void>
}

const isAgent = (author: MemberPrincipal): boolean => author.kind === 'agent'

function loopDetected(message: string, retryAfterSeconds: number): AppError {
  return new AppError('LOOP_DETECTED', message, { headers: { 'retry-after': String(Math.max(1, Math.ceil(retryAfterSeconds))) } })
}

/**
 * The depth of the message `author` is posting: 0 for a human; for an agent one more than the
 * message `inReplyToEvent` is about (1 without one, or for an event unknown or not about a
 * message). Throws 429 LOOP_DETECTED beyond the workspace's cap.
 */
export async function chainDepth(app: FastifyInstance, author: MemberPrincipal, inReplyToEvent: string | undefined, settings: LoopGuardSettings): Promise<number> {
  if (!isAgent(author)) return 0
  const parent = inReplyToEvent ? ((await repo.chainDepthOfEvent(app.db.pool, inReplyToEvent)) ?? 0) : 0
  const depth = parent + 1
  if (settings.maxDepth > 0 && depth > settings.maxDepth) {
    // Waiting does not shorten a chain; Retry-After is the window only because every 429 has one.
    throw loopDetected(
      `loop detected: this would be message ${depth} of a chain of agent replies (in_reply_to_event), and the workspace allows ${settings.maxDepth}; a human message starts a new chain`,
      settings.windowSeconds,
    )
  }
  return depth
}

/**
 * Counts an agent's message in its conversation, or throws 429 LOOP_DETECTED when agents alone
 * already posted the maximum there within the window. Humans are not counted. Returns what to
 * call if the message is not stored after all (null when nothing was recorded).
 */
export async function admit(app: FastifyInstance, author: MemberPrincipal, where: Conversation, at: Date, settings: LoopGuardSettings): Promise<Admission | null> {
  if (!isAgent(author) || settings.maxMessages === 0) return null
  const pool = app.db.pool
  const outcome = await repo.admitAgentMessage(pool, {
    ...where,
    authorId: author.id,
    at,
    maxMessages: settings.maxMessages,
    windowMs: settings.windowSeconds * 1000,
  })
  if (!outcome.admitted) {
    const wait = (outcome.retryAt.getTime() - Date.now()) / 1000
    throw loopDetected(
      `loop detected: agents posted ${settings.maxMessages} messages here within ${settings.windowSeconds} s with no human message in between; an agent may post again in ${Math.max(1, Math.ceil(wait))} s, or as soon as a human posts here`,
      wait,
    )
  }
  if (!outcome.recorded) return null
  return { release: () => repo.releaseAgentMessage(pool, { ...where, at }) }
}

/** After a human's message is stored: the agents' count in that conversation starts over. */
export async function humanSpoke(app: FastifyInstance, author: MemberPrincipal, where: Conversation): Promise<void> {
  // Even with the guard off: turned on again, it must not count agent messages from before.
  if (isAgent(author)) return
  await repo.resetLoopGuard(app.db.pool, where)
}
