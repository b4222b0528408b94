// An agent's status on a thread without a stream (issue 25, item 3; docs/decisions.md, "Streaming
// messages, the rest (issue 25)"): what it is doing before it answers in a thread, the same title
// and steps as a stream's status, kept per thread root and agent, pushed to watchers as a
// `thread_status` signal (WebSocket and SSE, like `message_status`) and read by a late joiner with
// GET …/thread/status. It goes away when the agent clears it, when it posts or starts streaming a
// reply in the thread, and after STREAM_IDLE_SECONDS without a change (the stream sweep).
// Kept apart from ./service.ts so that the post path (src/modules/messages/service.ts) can clear
// a status without importing the streams service, which imports the messages service.
import type { ServiceContext } from '../context.ts'
import { AppError, forbidden, notFound } from '../../lib/errors.ts'
import type { MemberPrincipal } from '../identity/principal.ts'
import { assertCanPost, readableChannel } from '../channels/access.ts'
import * as repo from './repo.ts'
import type { StreamStatusDto, ThreadStatusesDto } from './schemas.ts'

/** The thread's root in this channel, for a caller who can read it: 404 when not, 400 for a reply. */
async function threadRoot(ctx: ServiceContext, principal: MemberPrincipal, channelId: string, rootId: string) {
  const access = await readableChannel(ctx, principal, channelId)
  const target = await repo.threadTarget(ctx.db.pool, channelId, rootId)
  if (!target) throw notFound('message')
  if (target.threadId) throw new AppError('THREAD_NOT_ROOT', `message ${rootId} is a reply; a thread's status is set on its root, ${target.threadId}`)
  return access
}

function publish(ctx: ServiceContext, s: { channelId: string; rootId: string; agentId: string; agentName: string; status: StreamStatusDto | null }): void {
  ctx.signals.publish({
    channelIds: [s.channelId],
    except: s.agentId,
    sse: true,
    frame: { type: 'thread_status', channel_id: s.channelId, thread_id: s.rootId, agent_id: s.agentId, agent_name: s.agentName, status: s.status },
  })
}

/** `PUT …/thread/status`: an agent that may post in the channel sets (replaces) its status on the thread. */
export async function setThreadStatus(ctx: ServiceContext, principal: MemberPrincipal, channelId: string, rootId: string, status: StreamStatusDto): Promise<ThreadStatusesDto> {
  if (principal.kind !== 'agent') throw forbidden('a status is shown for agents at work; a person says what they do in the conversation')
  const access = await threadRoot(ctx, principal, channelId, rootId)
  assertCanPost(principal, access)
  const set = await repo.setThreadStatus(ctx.db.pool, { rootId, channelId, agentId: principal.id, agentName: principal.displayName, status, at: new Date() })
  if (!set) throw forbidden('join the channel to post in it')
  publish(ctx, { channelId, rootId, agentId: principal.id, agentName: principal.displayName, status })
  return threadStatusesOf(ctx, channelId, rootId)
}

/** `DELETE …/thread/status`: the agent clears its status (none set: nothing to do). */
export async function clearThreadStatus(ctx: ServiceContext, principal: MemberPrincipal, channelId: string, rootId: string): Promise<void> {
  await threadRoot(ctx, principal, channelId, rootId)
  await clearOnReply(ctx, rootId, principal.id)
}

/** `GET …/thread/status`: the statuses on a thread, for a reader of the channel (a late joiner). */
export async function threadStatuses(ctx: ServiceContext, principal: MemberPrincipal, channelId: string, rootId: string): Promise<ThreadStatusesDto> {
  await threadRoot(ctx, principal, channelId, rootId)
  return threadStatusesOf(ctx, channelId, rootId)
}

async function threadStatusesOf(ctx: ServiceContext, channelId: string, rootId: string): Promise<ThreadStatusesDto> {
  const rows = await repo.threadStatuses(ctx.db.pool, rootId)
  return {
    channel_id: channelId,
    thread_id: rootId,
    statuses: rows.map((r) => ({ agent_id: r.agentId, agent_name: r.agentName, status: r.status as StreamStatusDto, updated_at: r.updatedAt.toISOString() })),
  }
}

/**
 * The agent answered in the thread (a posted or streaming reply): its status there is over. One
 * delete by primary key; watchers are told only when there was one.
 */
export async function clearOnReply(ctx: ServiceContext, rootId: string, agentId: string): Promise<void> {
  const cleared = await repo.clearThreadStatus(ctx.db.pool, rootId, agentId)
  if (cleared) publish(ctx, { channelId: cleared.channelId, rootId, agentId, agentName: cleared.agentName, status: null })
}

/** Clears the statuses unchanged for STREAM_IDLE_SECONDS as of `now`, telling watchers; answers how many. */
export async function expireThreadStatuses(ctx: ServiceContext, now: number, batch = 100): Promise<number> {
  const before = new Date(now - ctx.config.streamIdleSeconds * 1000)
  let expired = 0
  for (;;) {
    const rows = await repo.expireThreadStatuses(ctx.db.pool, before, batch)
    for (const r of rows) publish(ctx, { channelId: r.channelId, rootId: r.rootId, agentId: r.agentId, agentName: r.agentName, status: null })
    expired += rows.length
    if (rows.length < batch) return expired
  }
}
