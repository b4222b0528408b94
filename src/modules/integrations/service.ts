// Integrations, managed by the workspace owner. Creation returns the `svc_int_` API key and the
// HMAC secret once; each can be rotated on its own. The inbound endpoint lets an integration post
// as one of the agents it may act for (any agent when its `agent_ids` is empty), through the same
// service as REST (same validation, access rules and events).
import type { ServiceContext } from '../context.ts'
import type { PrismaClient } from '../../db/client.ts'
import { AppError, forbidden, notFound } from '../../lib/errors.ts'
import { uuidv7 } from '../../lib/ids.ts'
import { INTEGRATION_KEY_PREFIX, maskSecret, newSecret, sha256Hex, WEBHOOK_SECRET_PREFIX } from '../../lib/tokens.ts'
import type { AgentPrincipal, Principal } from '../identity/principal.ts'
import { isMember } from '../channels/access.ts'
import { createMessage } from '../messages/service.ts'
import type { MessageDto } from '../../schemas/message.ts'
import * as deliveries from '../webhooks/deliveries.ts'
import type { DeliveryDto, DeliveryListQueryInput, DeliveryPage } from '../webhooks/schemas.ts'
import { onlyOf, validateTargetUrl } from '../webhooks/service.ts'
import * as repo from './repo.ts'
import { DEFAULT_INTEGRATION_EVENTS, type CreatedIntegration, type CreateIntegrationInput, type InboundInput, type IntegrationDto, type UpdateIntegrationInput } from './schemas.ts'

export function toIntegrationDto(i: repo.IntegrationWithAgents): IntegrationDto {
  return {
    id: i.id,
    name: i.name,
    platform: i.platform,
    webhook_url: i.webhookUrl,
    events: i.events,
    agent_ids: i.agents.map((a) => a.agentId),
    all_agents: i.allAgents,
    include_own_messages: i.includeOwnMessages,
    only: onlyOf(i.only),
    masked_key: i.maskedKey,
    active: i.active,
    disabled_at: i.disabledAt?.toISOString() ?? null,
    disabled_reason: i.disabledReason,
    consecutive_failures: i.consecutiveFailures,
    failing_since: i.failingSince?.toISOString() ?? null,
    created_at: i.createdAt.toISOString(),
    updated_at: i.updatedAt.toISOString(),
  }
}

function newKey(): { key: string; keyHash: string; maskedKey: string } {
  const key = newSecret(INTEGRATION_KEY_PREFIX)
  return { key, keyHash: sha256Hex(key), maskedKey: maskSecret(key, INTEGRATION_KEY_PREFIX) }
}

async function assertAgentsExist(ctx: ServiceContext, ids: string[]): Promise<void> {
  const unknown = await repo.unknownAgents(ctx.db.prisma, ids)
  if (unknown.length) throw new AppError('VALIDATION_ERROR', `agent_ids: no agent with id ${unknown.join(', ')}`)
}

async function found(ctx: ServiceContext, id: string): Promise<repo.IntegrationWithAgents> {
  const integration = await repo.findIntegration(ctx.db.prisma, id)
  if (!integration) throw notFound('integration')
  return integration
}

export async function createIntegration(ctx: ServiceContext, input: CreateIntegrationInput): Promise<CreatedIntegration> {
  const webhookUrl = await validateTargetUrl(ctx, input.webhook_url)
  const agentIds = [...new Set([...(input.agent_ids ?? []), ...(input.agent_id ? [input.agent_id] : [])])]
  await assertAgentsExist(ctx, agentIds)
  const { key, keyHash, maskedKey } = newKey()
  const hmacSecret = input.hmac_secret ?? newSecret(WEBHOOK_SECRET_PREFIX)
  const integration = await repo.createIntegration(
    ctx.db.prisma,
    {
      id: uuidv7(),
      name: input.name.trim(),
      platform: input.platform ?? 'custom',
      webhookUrl,
      events: [...new Set(input.events ?? DEFAULT_INTEGRATION_EVENTS)],
      keyHash,
      maskedKey,
      hmacSecret,
      allAgents: agentIds.length === 0,
      includeOwnMessages: input.include_own_messages ?? true,
      only: input.only ?? null,
    },
    agentIds,
  )
  return { ...toIntegrationDto(integration), api_key: key, hmac_secret: hmacSecret }
}

export async function listIntegrations(ctx: ServiceContext): Promise<IntegrationDto[]> {
  return (await repo.listIntegrations(ctx.db.prisma)).map(toIntegrationDto)
}

export async function getIntegration(ctx: ServiceContext, id: string): Promise<IntegrationDto> {
  return toIntegrationDto(await found(ctx, id))
}

export async function updateIntegration(ctx: ServiceContext, id: string, patch: UpdateIntegrationInput): Promise<IntegrationDto> {
  const existing = await found(ctx, id)
  const data: Parameters<typeof repo.updateIntegration>[2] = {}
  if (patch.name !== undefined) data.name = patch.name.trim()
  if (patch.platform !== undefined) data.platform = patch.platform
  if (patch.webhook_url !== undefined) data.webhookUrl = await validateTargetUrl(ctx, patch.webhook_url)
  if (patch.events !== undefined) data.events = [...new Set(patch.events)]
  if (patch.include_own_messages !== undefined) data.includeOwnMessages = patch.include_own_messages
  if (patch.only !== undefined) data.only = patch.only
  if (patch.agent_ids !== undefined) {
    await assertAgentsExist(ctx, patch.agent_ids)
    data.allAgents = patch.agent_ids.length === 0
  }
  if (patch.active === true && !existing.active) {
    Object.assign(data, { active: true, disabledAt: null, disabledReason: null, consecutiveFailures: 0, failingSince: null })
  } else if (patch.active === false && existing.active) {
    Object.assign(data, { active: false, disabledAt: new Date(), disabledReason: 'disabled by the workspace owner' })
  }
  return toIntegrationDto(await repo.updateIntegration(ctx.db.prisma, id, data, patch.agent_ids))
}

export async function deleteIntegration(ctx: ServiceContext, id: string): Promise<void> {
  if (!(await repo.deleteIntegration(ctx.db.prisma, id))) throw notFound('integration')
}

export async function rotateKey(ctx: ServiceContext, id: string): Promise<{ id: string; api_key: string; masked_key: string }> {
  await found(ctx, id)
  const { key, keyHash, maskedKey } = newKey()
  await repo.updateIntegration(ctx.db.prisma, id, { keyHash, maskedKey })
  return { id, api_key: key, masked_key: maskedKey }
}

export async function rotateSecret(ctx: ServiceContext, id: string): Promise<{ id: string; hmac_secret: string }> {
  await found(ctx, id)
  const hmacSecret = newSecret(WEBHOOK_SECRET_PREFIX)
  await repo.updateIntegration(ctx.db.prisma, id, { hmacSecret })
  return { id, hmac_secret: hmacSecret }
}

export async function listDeliveries(ctx: ServiceContext, id: string, query: DeliveryListQueryInput): Promise<DeliveryPage> {
  await found(ctx, id)
  return deliveries.listDeliveries(ctx, { integrationId: id }, query)
}

export async function redeliver(ctx: ServiceContext, id: string, deliveryId: string): Promise<DeliveryDto> {
  const integration = await found(ctx, id)
  if (!integration.active) throw new AppError('CONFLICT', 'the integration is disabled; re-enable it first (PATCH with {"active": true})')
  return deliveries.redeliver(ctx, { integrationId: id }, deliveryId)
}

/**
 * Inbound message: the caller's key must be this integration's (another integration's key sees
 * no such integration: 404), the agent must be one it may act for (403; with an empty
 * `agent_ids` every agent is, and an unknown one is simply not a member: 404), and a member of
 * the channel (404, as for any non-member). The message is posted as that agent.
 */
/**
 * Posts as an agent the integration acts for. An Idempotency-Key makes retries safe exactly as on
 * REST posts; keys are scoped to the integration (two integrations acting for one agent never
 * share a key).
 */
export async function inbound(ctx: ServiceContext, principal: Principal, integrationId: string, input: InboundInput, idempotencyKey?: string): Promise<MessageDto> {
  if (principal.kind !== 'integration' || principal.id !== integrationId) throw notFound('integration')
  const { restricted, agent } = await repo.actingAgent(ctx.db.prisma, integrationId, input.agent_id)
  if (!agent && restricted) throw forbidden("this integration may not act for that agent (add it to the integration's agent_ids)")
  if (!agent || !(await isMember(ctx, input.channel_id, agent.id))) throw notFound('channel (or the agent is not a member of it)')
  const author: AgentPrincipal = { kind: 'agent', id: agent.id, name: agent.name, displayName: agent.displayName, keyId: '' }
  const key = idempotencyKey === undefined ? undefined : `integration:${integrationId}:${idempotencyKey}`
  const result = await createMessage(ctx, author, input.channel_id, {
    text: input.text,
    idempotencyKey: key,
    inReplyToEvent: input.in_reply_to_event,
    mentions: input.mentions,
    threadId: input.thread_id,
  })
  return result.body as MessageDto
}

/** The integration whose key hashes to `keyHash`, or null (src/plugins/auth.ts). */
export function integrationByKeyHash(prisma: PrismaClient, keyHash: string): Promise<{ id: string; keyHash: string } | null> {
  return repo.findByKeyHash(prisma, keyHash)
}
