// Workspace settings. The rate limit and the loop guard take effect at once on this server and
// within the settings caches' lifetime on the others (src/plugins/rate-limit.ts, settings.ts).
import type { ServiceContext } from '../context.ts'
import type { Db, Prisma } from '../../db/client.ts'
import { badRequest, notFound } from '../../lib/errors.ts'
import { createInstance, findInstance, lockWorkspace, updateInstance, type InstanceSettingsPatch } from './repo.ts'
import { forgetWorkspaceSettings } from './settings.ts'
import { LOOP_GUARD_MAX_MESSAGES_RENAMED, type RegistrationMode, type WorkspaceDto, type WorkspacePatch } from './schemas.ts'

export async function getWorkspace(ctx: ServiceContext): Promise<WorkspaceDto> {
  const instance = await findInstance(ctx.db.prisma)
  if (!instance) throw notFound('workspace')
  return {
    instance_id: instance.id,
    bootstrapped_at: instance.bootstrappedAt.toISOString(),
    rate_limit_per_minute: instance.rateLimitPerMinute,
    effective_rate_limit_per_minute: instance.rateLimitPerMinute ?? ctx.config.rateLimitPerMinute,
    registration_mode: instance.registrationMode as RegistrationMode,
    loop_guard_enabled: instance.loopGuardEnabled,
    loop_guard_max_turns: instance.loopGuardMaxTurns,
    loop_guard_window_seconds: instance.loopGuardWindowSeconds,
    loop_guard_max_depth: instance.loopGuardMaxDepth,
    max_file_bytes: ctx.config.maxFileBytes,
  }
}

export async function updateWorkspace(ctx: ServiceContext, patch: WorkspacePatch): Promise<WorkspaceDto> {
  const instance = await findInstance(ctx.db.prisma)
  if (!instance) throw notFound('workspace')
  const data: InstanceSettingsPatch = {}
  if (patch.rate_limit_per_minute !== undefined) data.rateLimitPerMinute = patch.rate_limit_per_minute
  if (patch.registration_mode !== undefined) data.registrationMode = patch.registration_mode
  if (patch.loop_guard_max_messages !== undefined) throw badRequest(LOOP_GUARD_MAX_MESSAGES_RENAMED)
  if (patch.loop_guard_enabled !== undefined) data.loopGuardEnabled = patch.loop_guard_enabled
  if (patch.loop_guard_max_turns !== undefined) data.loopGuardMaxTurns = patch.loop_guard_max_turns
  if (patch.loop_guard_window_seconds !== undefined) data.loopGuardWindowSeconds = patch.loop_guard_window_seconds
  if (patch.loop_guard_max_depth !== undefined) data.loopGuardMaxDepth = patch.loop_guard_max_depth
  await updateInstance(ctx.db.prisma, instance.id, data)
  forgetWorkspaceSettings(ctx)
  return getWorkspace(ctx)
}

// For other modules and plugins: the instance row, the workspace lock.

/** The workspace's instance row (null before bootstrap). */
export function workspaceInstance(db: Db) {
  return findInstance(db)
}

/** Creates the instance row (bootstrap, in its transaction). */
export function createWorkspaceInstance(tx: Prisma.TransactionClient, id: string) {
  return createInstance(tx, id)
}

/** Takes the workspace lock until the end of the transaction (bootstrap against user creation). */
export function lockWorkspaceIn(tx: Prisma.TransactionClient): Promise<void> {
  return lockWorkspace(tx)
}
