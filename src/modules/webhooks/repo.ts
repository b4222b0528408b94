// Webhooks and the delivery history (shared with integrations). Only this file and the other
// repo.ts files touch Prisma.
import type { Prisma, PrismaClient } from '../../db/client.ts'
import type { Delivery, DeliveryStatus, Webhook } from '../../generated/prisma/client.ts'

type Db = PrismaClient | Prisma.TransactionClient

export function agentExists(db: Db, agentId: string): Promise<boolean> {
  return db.agent.count({ where: { id: agentId } }).then((n) => n > 0)
}

export function createWebhook(db: Db, data: Prisma.WebhookUncheckedCreateInput): Promise<Webhook> {
  return db.webhook.create({ data })
}

export function listWebhooks(db: Db, agentId: string): Promise<Webhook[]> {
  return db.webhook.findMany({ where: { agentId }, orderBy: { id: 'asc' } })
}

export function findWebhook(db: Db, agentId: string, webhookId: string): Promise<Webhook | null> {
  return db.webhook.findFirst({ where: { id: webhookId, agentId } })
}

export function updateWebhook(db: Db, webhookId: string, data: Prisma.WebhookUncheckedUpdateInput): Promise<Webhook> {
  return db.webhook.update({ where: { id: webhookId }, data })
}

export async function deleteWebhook(db: Db, agentId: string, webhookId: string): Promise<boolean> {
  const { count } = await db.webhook.deleteMany({ where: { id: webhookId, agentId } })
  return count > 0
}

export type DeliveryTarget = { webhookId: string } | { integrationId: string }

export function listDeliveries(db: Db, target: DeliveryTarget, page: { limit: number; before?: string; status?: DeliveryStatus }): Promise<Delivery[]> {
  return db.delivery.findMany({
    where: { ...target, ...(page.before ? { id: { lt: page.before } } : {}), ...(page.status ? { status: page.status } : {}) },
    orderBy: { id: 'desc' },
    take: page.limit + 1,
  })
}

/** Puts a delivery back in the queue, due now (the scheduler picks it up within a tick). */
export async function requeueDelivery(db: Db, target: DeliveryTarget, deliveryId: string): Promise<Delivery | null> {
  const { count } = await db.delivery.updateMany({
    where: { id: deliveryId, ...target },
    data: { status: 'pending', nextAttemptAt: new Date(), completedAt: null, updatedAt: new Date() },
  })
  return count ? db.delivery.findUnique({ where: { id: deliveryId } }) : null
}
