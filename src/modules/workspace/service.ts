// Workspace settings. The rate limit takes effect at once on this server and within the
// settings cache's lifetime on the others (src/plugins/rate-limit.ts).
import type { FastifyInstance } from 'fastify'
import { notFound } from '../../lib/errors.ts'
import { findInstance, updateInstance } from './repo.ts'
import type { RegistrationMode, WorkspaceDto, WorkspacePatch } from './schemas.ts'

export async function getWorkspace(app: FastifyInstance): Promise<WorkspaceDto> {
  const instance = await findInstance(app.db.prisma)
  if (!instance) throw notFound('workspace')
  return {
    instance_id: instance.id,
    bootstrapped_at: instance.bootstrappedAt.toISOString(),
    rate_limit_per_minute: instance.rateLimitPerMinute,
    effective_rate_limit_per_minute: instance.rateLimitPerMinute ?? app.config.rateLimitPerMinute,
    registration_mode: instance.registrationMode as RegistrationMode,
  }
}

export async function updateWorkspace(app: FastifyInstance, patch: WorkspacePatch): Promise<WorkspaceDto> {
  const instance = await findInstance(app.db.prisma)
  if (!instance) throw notFound('workspace')
  const data: { rateLimitPerMinute?: number | null; registrationMode?: string } = {}
  if (patch.rate_limit_per_minute !== undefined) data.rateLimitPerMinute = patch.rate_limit_per_minute
  if (patch.registration_mode !== undefined) data.registrationMode = patch.registration_mode
  await updateInstance(app.db.prisma, instance.id, data)
  app.rateLimitSettings.invalidate()
  return getWorkspace(app)
}
