// GET /api/v1/workspace (any caller) and PATCH /api/v1/workspace (the owner): the instance id and
// its settings (the per-workspace API rate limit, the registration mode, the loop guard).
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { errors } from '../../schemas/common.ts'
import { WorkspacePatchSchema, WorkspaceSchema } from './schemas.ts'
import { getWorkspace, updateWorkspace } from './service.ts'

export default async function workspaceRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()

  app.get(
    '/workspace',
    {
      config: { auth: 'any' },
      schema: {
        operationId: 'getWorkspace',
        tags: ['system'],
        summary: 'The workspace (instance id and settings)',
        response: { 200: WorkspaceSchema, ...errors(404) },
      },
    },
    async () => getWorkspace(fastify.ctx),
  )

  app.patch(
    '/workspace',
    {
      config: { auth: 'owner' },
      schema: {
        operationId: 'updateWorkspace',
        tags: ['system'],
        summary: 'Change workspace settings (workspace owner only)',
        description:
          'Sets the per-workspace API rate limit, the self-registration mode (`registration_mode`) and the loop guard (`loop_guard_enabled`, `loop_guard_max_turns`, `loop_guard_window_seconds`, `loop_guard_max_depth`; docs/loops.md; the old `loop_guard_max_messages` answers a 400 naming its replacement); give at least one. A value out of range is a 400 and changes nothing. Settings apply without a restart (on other servers within 5 s). This route is never rate-limited for the owner, so a limit can always be lifted.',
        body: WorkspacePatchSchema,
        response: { 200: WorkspaceSchema, ...errors(400, 404) },
      },
    },
    async (request) => updateWorkspace(fastify.ctx, request.body),
  )
}
