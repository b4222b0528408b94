// Loop protection (docs/loops.md): two checks on every message an agent posts, whichever way it
// posts (REST JSON or multipart, WebSocket, the integration inbound endpoint, MCP), because all of
// them go through createMessage.
//
// 1. The turn limit: a loop is agents answering each other, not agents working. A *turn* is an
//    agent post that follows, within `loop_guard_window_seconds`, a message by another agent
//    (no human message in between) that the poster could have been answering: it listens to the
//    conversation through a webhook, an integration acting for it, the socket it posts over, or a
//    WebSocket or SSE stream it has open on this server. Turns add up only while the same two
//    agents take them (an echo pair takes nothing else); a turn of another pair starts the count
//    over, so agents posting on their own schedules, interleaved at random, are not an exchange.
//    At most `loop_guard_max_turns` turns of one pair per conversation (a channel, or one thread
//    of it) within the window. One agent posting any number of messages in a row takes no turn;
//    agents that listen to nothing take none. The previous message, the count, the refusal and the
//    record are part of the statement that inserts the message (loop_guard_admit_turns in its WITH
//    clause, src/modules/messages/loop-guard-repo.ts), under the conversation's row lock, only for a turn:
//    a post that takes none reads and writes no guard state.
// 2. The chain cap: a message posted `in_reply_to_event` of an agent's message is one deeper than
//    it; beyond `loop_guard_max_depth` the post is refused. A human's message is depth 0. This
//    stops one agent answering itself, which takes no turns.
// Both refusals are 429 LOOP_DETECTED with Retry-After. `loop_guard_enabled` false turns both off.
import type { ServiceContext } from '../context.ts'
import { AppError } from '../../lib/errors.ts'
import type { Prisma } from '../../db/client.ts'
import type { MemberPrincipal } from '../identity/principal.ts'
import type { LoopGuardSettings } from '../workspace/settings.ts'
import * as repo from './loop-guard-repo.ts'

const isAgent = (author: MemberPrincipal): boolean => author.kind === 'agent'

function loopDetected(message: string, retryAfterSeconds: number): AppError {
  return new AppError('LOOP_DETECTED', message, { headers: { 'retry-after': String(Math.max(1, Math.ceil(retryAfterSeconds))) } })
}

/**
 * The depth of the message `author` is posting: 0 for a human; for an agent one more than the
 * message `inReplyToEvent` is about (1 without one, or for an event unknown or not about a
 * message). Throws 429 LOOP_DETECTED beyond the workspace's cap.
 */
export async function chainDepth(ctx: ServiceContext, author: MemberPrincipal, inReplyToEvent: string | undefined, settings: LoopGuardSettings): Promise<number> {
  if (!isAgent(author)) return 0
  const parent = inReplyToEvent ? ((await repo.chainDepthOfEvent(ctx.db.pool, inReplyToEvent)) ?? 0) : 0
  const depth = parent + 1
  if (settings.enabled && settings.maxDepth > 0 && depth > settings.maxDepth) {
    // Waiting does not shorten a chain; Retry-After is the window only because every 429 has one.
    throw loopDetected(
      `loop detected: this would be message ${depth} of a chain of agent replies (in_reply_to_event), and the workspace allows ${settings.maxDepth}; a human message starts a new chain`,
      settings.windowSeconds,
    )
  }
  return depth
}

/**
 * The guard's inputs to the insert statement, or undefined when it is off. `listening`: the post
 * comes over a socket, which hears the conversation (webhooks and integrations are looked up by
 * the statement itself).
 */
export function guardParams(settings: LoopGuardSettings, listening: boolean): repo.GuardParams | undefined {
  if (!settings.enabled) return undefined
  return { listening, maxTurns: settings.maxTurns, windowMs: settings.windowSeconds * 1000 }
}

/** The refusal of a post that would be one turn too many (the statement said until when). */
export function tooManyTurns(settings: LoopGuardSettings, retryAt: Date): AppError {
  const wait = Math.max(1, Math.ceil((retryAt.getTime() - Date.now()) / 1000))
  return loopDetected(
    `loop detected: agents took ${settings.maxTurns} turns answering each other here within ${settings.windowSeconds} s with no human message in between; another agent may answer here again in ${wait} s, or as soon as a human posts here (an agent posting on its own is never refused)`,
    wait,
  )
}

/**
 * A streamed message takes its turn at its start, exactly as a post (the first thing watchers see
 * of it is its start): in the transaction that inserts it, so a refused start stores nothing.
 * Throws 429 LOOP_DETECTED when it would be one turn too many. `listening`: the agent hears the
 * conversation over a socket here (as for a post).
 */
export async function admitStreamStart(
  tx: Prisma.TransactionClient,
  settings: LoopGuardSettings,
  s: { channelId: string; threadId: string | null; authorId: string; at: Date; listening: boolean },
): Promise<void> {
  const guard = guardParams(settings, s.listening)
  if (!guard) return
  const next = await repo.admitStreamTurn(tx, { channelId: s.channelId, threadId: s.threadId, authorId: s.authorId, at: s.at, guard })
  if (next) throw tooManyTurns(settings, next)
}
