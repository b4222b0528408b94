// Agents and their API keys. The workspace owner creates, renames and deletes agents and
// creates or revokes keys; an agent may edit its own profile (not its name) and list its own
// keys; every authenticated caller may list and read agents.
import type { ServiceContext } from '../context.ts'
import type pg from 'pg'
import type { Db, Prisma } from '../../db/client.ts'
import type { Agent, ApiKey } from '../../generated/prisma/client.ts'
import { AppError, forbidden, notFound } from '../../lib/errors.ts'
import { uuidv7 } from '../../lib/ids.ts'
import { API_KEY_PREFIX, maskSecret, newSecret, sha256Hex } from '../../lib/tokens.ts'
import { isOwner, type MemberPrincipal, type Principal } from '../identity/principal.ts'
import { assertMetadata } from '../accounts/rules.ts'
import * as repo from './repo.ts'
import type { AgentDto, CreateAgentInput, CreatedKey, MaskedKey, UpdateAgentInput } from './schemas.ts'

/** `online` comes from the presence registry (`withPresence`); a row alone says offline. */
export function toAgentDto(agent: Agent, online = false): AgentDto {
  const status = agent.statusText && agent.statusExpiresAt && agent.statusExpiresAt.getTime() > Date.now() ? { text: agent.statusText, expires_at: agent.statusExpiresAt.toISOString() } : null
  return {
    id: agent.id,
    name: agent.name,
    display_name: agent.displayName,
    description: agent.description,
    avatar_url: agent.avatarUrl,
    metadata: (agent.metadata ?? null) as AgentDto['metadata'],
    is_primary: agent.isPrimary,
    created_at: agent.createdAt.toISOString(),
    updated_at: agent.updatedAt.toISOString(),
    online,
    last_seen_at: agent.lastSeenAt ? agent.lastSeenAt.toISOString() : null,
    status,
  }
}

/** Agents as DTOs with whether each is connected now (src/realtime/presence.ts). */
async function withPresence(ctx: ServiceContext, rows: Agent[]): Promise<AgentDto[]> {
  const online = await ctx.presence.online(rows.map((a) => a.id))
  return rows.map((a) => toAgentDto(a, online.has(a.id)))
}

function toMaskedKey(key: ApiKey): MaskedKey {
  return {
    id: key.id,
    name: key.name,
    masked_key: key.maskedKey,
    created_at: key.createdAt.toISOString(),
    revoked_at: key.revokedAt?.toISOString() ?? null,
  }
}

const nameTaken = (name: string): AppError => new AppError('NAME_TAKEN', `an agent named '${name}' already exists`)
const isUniqueViolation = (error: unknown): boolean => (error as { code?: string })?.code === 'P2002'

/** A new API key for an agent: the plaintext goes to the caller once, only its hash is stored. */
export function newApiKey(agentId: string, name: string): { key: string; row: Prisma.ApiKeyUncheckedCreateInput } {
  const key = newSecret(API_KEY_PREFIX)
  return { key, row: { id: uuidv7(), agentId, name, keyHash: sha256Hex(key), maskedKey: maskSecret(key, API_KEY_PREFIX) } }
}

export async function createAgent(ctx: ServiceContext, owner: MemberPrincipal, input: CreateAgentInput): Promise<AgentDto> {
  assertMetadata(input.metadata)
  try {
    return await ctx.events.transaction(async (tx) => {
      await repo.lockAgentNames(tx)
      if ((await repo.findAgentsNamed(tx, [input.name])).length) throw nameTaken(input.name)
      const agent = await repo.createAgent(tx, {
        id: uuidv7(),
        name: input.name,
        displayName: input.display_name?.trim() ?? input.name,
        description: input.description ?? null,
        avatarUrl: input.avatar_url ?? null,
        metadata: input.metadata ?? undefined,
        ownerId: owner.kind === 'human' ? owner.id : null,
      })
      return toAgentDto(agent)
    })
  } catch (error) {
    if (isUniqueViolation(error)) throw nameTaken(input.name)
    throw error
  }
}

export async function listAgents(ctx: ServiceContext): Promise<AgentDto[]> {
  return withPresence(ctx, await repo.listAgents(ctx.db.prisma))
}

export async function getAgent(ctx: ServiceContext, id: string): Promise<AgentDto> {
  const agent = await repo.findAgent(ctx.db.prisma, id)
  if (!agent) throw notFound('agent')
  return (await withPresence(ctx, [agent]))[0]!
}

export async function getSelf(ctx: ServiceContext, principal: Principal): Promise<AgentDto> {
  if (principal.kind !== 'agent') throw forbidden('this endpoint describes the calling agent; use an agent API key (humans: GET /api/v1/auth/me)')
  return getAgent(ctx, principal.id)
}

export async function updateAgent(ctx: ServiceContext, principal: Principal, id: string, patch: UpdateAgentInput): Promise<AgentDto> {
  const existing = await repo.findAgent(ctx.db.prisma, id)
  if (!existing) throw notFound('agent')
  assertMetadata(patch.metadata)
  const self = principal.kind === 'agent' && principal.id === id
  if (!isOwner(principal) && !self) throw forbidden('only the workspace owner or the agent itself may change an agent')
  if (!isOwner(principal) && patch.name !== undefined && patch.name !== existing.name) {
    throw forbidden('only the workspace owner may rename an agent')
  }
  const data: repo.AgentChanges = {}
  if (patch.name !== undefined) data.name = patch.name
  if (patch.display_name !== undefined) data.displayName = patch.display_name.trim()
  if (patch.description !== undefined) data.description = patch.description
  if (patch.avatar_url !== undefined) data.avatarUrl = patch.avatar_url
  if (patch.metadata !== undefined) data.metadata = patch.metadata as Record<string, unknown> | null
  let updated: AgentDto
  try {
    updated = await ctx.events.transaction(async (tx) => {
      if (patch.name !== undefined && patch.name !== existing.name) {
        await repo.lockAgentNames(tx)
        if ((await repo.findAgentsNamed(tx, [patch.name], id)).length) throw nameTaken(patch.name)
      }
      return toAgentDto(await repo.updateAgent(tx, id, data))
    })
  } catch (error) {
    if (isUniqueViolation(error)) throw nameTaken(patch.name ?? existing.name)
    throw error
  }
  // Cached keys carry the names: its next request, on any instance, must carry the new ones.
  if (patch.name !== undefined || patch.display_name !== undefined) await ctx.forgetAgentKeys(id)
  return updated
}

/**
 * Deletes an agent with its keys (so they fail on the next request), webhooks and integration
 * links, and takes it out of every channel (a member.left event per channel). Its messages stay,
 * under the name it had. The primary agent cannot be deleted.
 */
export async function deleteAgent(ctx: ServiceContext, id: string): Promise<void> {
  const agent = await repo.findAgent(ctx.db.prisma, id)
  if (!agent) throw notFound('agent')
  if (agent.isPrimary) throw forbidden('the primary agent cannot be deleted')
  await ctx.events.transaction(async (tx, emit) => {
    const channelIds = await repo.membershipChannelIds(tx, id)
    await repo.deleteMemberships(tx, id)
    await repo.deleteAgent(tx, id)
    for (const channelId of channelIds) {
      emit('member.left', channelId, { channel_id: channelId, member_id: id, member_type: 'AGENT' }, [id])
    }
  })
  await ctx.forgetAgentKeys(id)
}

export async function createKey(ctx: ServiceContext, agentId: string, name: string): Promise<CreatedKey> {
  if (!(await repo.findAgent(ctx.db.prisma, agentId))) throw notFound('agent')
  const { key, row } = newApiKey(agentId, name.trim())
  const created = await repo.createApiKey(ctx.db.prisma, row)
  return { id: created.id, name: created.name, key, masked_key: created.maskedKey, created_at: created.createdAt.toISOString() }
}

export async function listKeys(ctx: ServiceContext, principal: Principal, agentId: string): Promise<MaskedKey[]> {
  if (!(await repo.findAgent(ctx.db.prisma, agentId))) throw notFound('agent')
  const self = principal.kind === 'agent' && principal.id === agentId
  if (!isOwner(principal) && !self) throw forbidden("only the workspace owner or the agent itself may list an agent's keys")
  return (await repo.listApiKeys(ctx.db.prisma, agentId)).map(toMaskedKey)
}

export async function revokeKey(ctx: ServiceContext, agentId: string, keyId: string): Promise<void> {
  const key = await repo.findApiKey(ctx.db.prisma, agentId, keyId)
  if (!key) throw notFound('API key')
  await repo.revokeApiKey(ctx.db.prisma, keyId)
  await ctx.forgetAgentKeys(agentId)
}

// For bootstrap and the auth plugin.

/** Agents whose name is one of these, ignoring case. */
export function agentsNamed(db: Db, names: string[]) {
  return repo.findAgentsNamed(db, names)
}

/** The batched, prepared API-key lookup every agent request starts with (src/plugins/auth.ts). */
export function agentKeyLookup(pool: pg.Pool): (keyHash: string) => Promise<repo.AgentKeyRecord | undefined> {
  return repo.agentKeyLookup(pool)
}
