// Delivery history and redelivery, for agent webhooks and integrations alike.
import type { ServiceContext } from '../context.ts'
import type { Delivery } from '../../generated/prisma/client.ts'
import { notFound } from '../../lib/errors.ts'
import * as repo from './repo.ts'
import type { DeliveryDto, DeliveryListQueryInput, DeliveryPage } from './schemas.ts'

export function toDeliveryDto(d: Delivery): DeliveryDto {
  return {
    id: d.id,
    event_id: d.eventId,
    event_type: d.eventType,
    status: d.status,
    attempts: d.attempts,
    last_status_code: d.lastStatusCode,
    last_error: d.lastError,
    last_duration_ms: d.lastDurationMs,
    next_attempt_at: d.status === 'pending' ? (d.nextAttemptAt?.toISOString() ?? null) : null,
    created_at: d.createdAt.toISOString(),
    updated_at: d.updatedAt.toISOString(),
    completed_at: d.completedAt?.toISOString() ?? null,
  }
}

export async function listDeliveries(ctx: ServiceContext, target: repo.DeliveryTarget, query: DeliveryListQueryInput): Promise<DeliveryPage> {
  const rows = await repo.listDeliveries(ctx.db.prisma, target, { limit: query.limit, before: query.before, status: query.status })
  const page = rows.slice(0, query.limit)
  return {
    deliveries: page.map(toDeliveryDto),
    has_more: rows.length > query.limit,
    next_before: page.at(-1)?.id ?? null,
  }
}

/**
 * Sends one delivery again, with the same id and the same body: it becomes pending and due now.
 * A failed delivery gets one more attempt; a succeeded one is sent once more.
 */
export async function redeliver(ctx: ServiceContext, target: repo.DeliveryTarget, deliveryId: string): Promise<DeliveryDto> {
  const row = await repo.requeueDelivery(ctx.db.prisma, target, deliveryId)
  if (!row) throw notFound('delivery')
  ctx.kickDeliveries()
  return toDeliveryDto(row)
}
