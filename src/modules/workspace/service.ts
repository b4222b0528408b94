// Workspace settings. The rate limit takes effect at once on this server and within the
// settings cache's lifetime on the others (src/plugins/rate-limit.ts).
import type { FastifyInstance } from 'fastify'
import { notFound } from '../../lib/errors.ts'
import { findInstance, updateInstance } from './repo.ts'
import type { WorkspaceDto, WorkspacePatch } from './schemas.ts'

export async function getWorkspace(app: FastifyInstance): Promise<WorkspaceDto> {
  const instance = await findInstance(app.db.prisma)
  if (!instance) throw notFound('workspace')
  return {
    instance_id: instance.id,
    bootstrapped_at: instance.bootstrappedAt.toISOString(),
    rate_limit_per_minute: instance.rateLimitPerMinute,
    effective_rate_limit_per_minute: instance.rateLimitPerMinute ?? app.config.rateLimitPerMinute,
  }
}

export async function updateWorkspace(app: FastifyInstance, patch: WorkspacePatch): Promise<WorkspaceDto> {
  const instance = await findInstance(app.db.prisma)
  if (!instance) throw notFound('workspace')
  if ('rate_limit_per_minute' in patch) await updateInstance(app.db.prisma, instance.id, { rateLimitPerMinute: patch.rate_limit_per_minute })
  app.rateLimitSettings.invalidate()
  return getWorkspace(app)
}
