// An agent's short status (agents.status_text / status_expires_at).
import type { PrismaClient } from '../../db/client.ts'

export async function setStatus(db: PrismaClient, agentId: string, text: string | null, expiresAt: Date | null): Promise<void> {
  await db.agent.update({ where: { id: agentId }, data: { statusText: text, statusExpiresAt: expiresAt } })
}
