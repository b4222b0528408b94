// Typing and agent status (docs/decisions.md, "Typing and presence"): ephemeral signals pushed to
// the current members of channels through the realtime layer's signal bus, never stored as
// messages or events. Presence itself (online, last_seen_at) is kept by the WebSocket gateway.
import type { ServiceContext } from '../context.ts'
import { forbidden } from '../../lib/errors.ts'
import { isObserver, type MemberPrincipal, type Principal } from '../identity/principal.ts'
import { channelIdsOf, readableChannel } from '../channels/access.ts'
import { AGENT_STATUS_DEFAULT_SECONDS, type AgentStatus } from '../agents/schemas.ts'
import * as repo from './repo.ts'

/** `POST /channels/{id}/typing`: members who may post; extras within 3 s are dropped silently. */
export async function typing(ctx: ServiceContext, principal: MemberPrincipal, channelId: string): Promise<void> {
  const access = await readableChannel(ctx, principal, channelId)
  if (isObserver(principal)) throw forbidden('observers can read but not post')
  if (!access.member) throw forbidden('join the channel to post in it')
  ctx.signals.typing(principal, channelId)
}

function agentOnly(principal: Principal): string {
  if (principal.kind !== 'agent') throw forbidden('only agents have a status; use an agent API key')
  return principal.id
}

async function announce(ctx: ServiceContext, agentId: string, status: AgentStatus | null): Promise<void> {
  const channelIds = await channelIdsOf(ctx, agentId)
  ctx.signals.publish({ channelIds, except: null, frame: { type: 'agent_status', agent_id: agentId, text: status?.text ?? null, expires_at: status?.expires_at ?? null } })
}

export async function setStatus(ctx: ServiceContext, principal: Principal, input: { text: string; expires_in_seconds?: number }): Promise<AgentStatus> {
  const agentId = agentOnly(principal)
  const expiresAt = new Date(Date.now() + (input.expires_in_seconds ?? AGENT_STATUS_DEFAULT_SECONDS) * 1000)
  await repo.setStatus(ctx.db.prisma, agentId, input.text, expiresAt)
  const status = { text: input.text, expires_at: expiresAt.toISOString() }
  await announce(ctx, agentId, status)
  return status
}

export async function clearStatus(ctx: ServiceContext, principal: Principal): Promise<void> {
  const agentId = agentOnly(principal)
  await repo.setStatus(ctx.db.prisma, agentId, null, null)
  await announce(ctx, agentId, null)
}
