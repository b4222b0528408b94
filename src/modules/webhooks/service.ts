// Per-agent webhooks. An agent's webhooks are managed by the agent itself (its API key) and by
// the workspace owner (JWT); for anyone else they do not exist (404). The signing secret is the
// caller's (16–256 characters) or generated here, and shown only at creation and on rotation.
import type { ServiceContext } from '../context.ts'
import type { Webhook } from '../../generated/prisma/client.ts'
import { ONLY_VALUES, type Only } from '../../events/filter.ts'
import { AppError, notFound } from '../../lib/errors.ts'
import { uuidv7 } from '../../lib/ids.ts'
import { checkTargetUrl, UnsafeUrlError } from '../../lib/ssrf.ts'
import { newSecret, WEBHOOK_SECRET_PREFIX } from '../../lib/tokens.ts'
import { isOwner, type Principal } from '../identity/principal.ts'
import * as deliveries from './deliveries.ts'
import * as repo from './repo.ts'
import type { CreatedWebhook, CreateWebhookInput, DeliveryDto, DeliveryListQueryInput, DeliveryPage, UpdateWebhookInput, WebhookDto } from './schemas.ts'

export function toWebhookDto(w: Webhook): WebhookDto {
  return {
    id: w.id,
    agent_id: w.agentId,
    url: w.url,
    events: w.events,
    include_own_messages: w.includeOwnMessages,
    only: onlyOf(w.only),
    active: w.active,
    disabled_at: w.disabledAt?.toISOString() ?? null,
    disabled_reason: w.disabledReason,
    consecutive_failures: w.consecutiveFailures,
    failing_since: w.failingSince?.toISOString() ?? null,
    created_at: w.createdAt.toISOString(),
  }
}

/** The stored filter (a text column) as the API shows it. */
export const onlyOf = (value: string | null): Only | null => (ONLY_VALUES.includes(value as Only) ? (value as Only) : null)

/** URL check shared with integrations: http(s), no private or reserved target (400 INVALID_URL). */
export async function validateTargetUrl(ctx: ServiceContext, url: string): Promise<string> {
  try {
    await checkTargetUrl(url, { allowPrivate: ctx.config.webhookAllowPrivate, allowHosts: ctx.config.webhookAllowHosts })
    return url
  } catch (error) {
    if (error instanceof UnsafeUrlError) throw new AppError('INVALID_URL', `url: ${error.message}`)
    throw error
  }
}

/** 404 unless the caller is the agent itself or the workspace owner, and the agent exists. */
async function assertManages(ctx: ServiceContext, principal: Principal, agentId: string): Promise<void> {
  const self = principal.kind === 'agent' && principal.id === agentId
  const owner = isOwner(principal)
  if (!self && !owner) throw notFound('agent')
  if (!(await repo.agentExists(ctx.db.prisma, agentId))) throw notFound('agent')
}

async function webhookOf(ctx: ServiceContext, principal: Principal, agentId: string, webhookId: string): Promise<Webhook> {
  await assertManages(ctx, principal, agentId)
  const webhook = await repo.findWebhook(ctx.db.prisma, agentId, webhookId)
  if (!webhook) throw notFound('webhook')
  return webhook
}

const uniq = (events: string[]): string[] => [...new Set(events)]

export async function createWebhook(ctx: ServiceContext, principal: Principal, agentId: string, input: CreateWebhookInput): Promise<CreatedWebhook> {
  await assertManages(ctx, principal, agentId)
  const url = await validateTargetUrl(ctx, input.url)
  const secret = input.secret ?? newSecret(WEBHOOK_SECRET_PREFIX)
  const webhook = await repo.createWebhook(ctx.db.prisma, {
    id: uuidv7(),
    agentId,
    url,
    events: uniq(input.events),
    secret,
    includeOwnMessages: input.include_own_messages ?? true,
    only: input.only ?? null,
  })
  return { ...toWebhookDto(webhook), secret }
}

export async function listWebhooks(ctx: ServiceContext, principal: Principal, agentId: string): Promise<WebhookDto[]> {
  await assertManages(ctx, principal, agentId)
  return (await repo.listWebhooks(ctx.db.prisma, agentId)).map(toWebhookDto)
}

export async function getWebhook(ctx: ServiceContext, principal: Principal, agentId: string, webhookId: string): Promise<WebhookDto> {
  return toWebhookDto(await webhookOf(ctx, principal, agentId, webhookId))
}

export async function updateWebhook(ctx: ServiceContext, principal: Principal, agentId: string, webhookId: string, patch: UpdateWebhookInput): Promise<WebhookDto> {
  const existing = await webhookOf(ctx, principal, agentId, webhookId)
  const data: Parameters<typeof repo.updateWebhook>[2] = {}
  if (patch.url !== undefined) data.url = await validateTargetUrl(ctx, patch.url)
  if (patch.events !== undefined) data.events = uniq(patch.events)
  if (patch.include_own_messages !== undefined) data.includeOwnMessages = patch.include_own_messages
  if (patch.only !== undefined) data.only = patch.only
  if (patch.active === true && !existing.active) {
    Object.assign(data, { active: true, disabledAt: null, disabledReason: null, consecutiveFailures: 0, failingSince: null })
  } else if (patch.active === false && existing.active) {
    Object.assign(data, { active: false, disabledAt: new Date(), disabledReason: 'disabled by its owner' })
  }
  return toWebhookDto(await repo.updateWebhook(ctx.db.prisma, webhookId, data))
}

export async function rotateSecret(ctx: ServiceContext, principal: Principal, agentId: string, webhookId: string): Promise<{ id: string; secret: string }> {
  await webhookOf(ctx, principal, agentId, webhookId)
  const secret = newSecret(WEBHOOK_SECRET_PREFIX)
  await repo.updateWebhook(ctx.db.prisma, webhookId, { secret })
  return { id: webhookId, secret }
}

export async function deleteWebhook(ctx: ServiceContext, principal: Principal, agentId: string, webhookId: string): Promise<void> {
  await assertManages(ctx, principal, agentId)
  if (!(await repo.deleteWebhook(ctx.db.prisma, agentId, webhookId))) throw notFound('webhook')
}

export async function listDeliveries(ctx: ServiceContext, principal: Principal, agentId: string, webhookId: string, query: DeliveryListQueryInput): Promise<DeliveryPage> {
  await webhookOf(ctx, principal, agentId, webhookId)
  return deliveries.listDeliveries(ctx, { webhookId }, query)
}

export async function redeliver(ctx: ServiceContext, principal: Principal, agentId: string, webhookId: string, deliveryId: string): Promise<DeliveryDto> {
  const webhook = await webhookOf(ctx, principal, agentId, webhookId)
  if (!webhook.active) throw new AppError('CONFLICT', 'the webhook is disabled; re-enable it first (PATCH with {"active": true})')
  return deliveries.redeliver(ctx, { webhookId }, deliveryId)
}
