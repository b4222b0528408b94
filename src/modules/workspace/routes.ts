// GET /api/v1/workspace (any caller) and PATCH /api/v1/workspace (the owner): the instance id and
// its settings (today: the per-workspace API rate limit).
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
    async () => getWorkspace(fastify),
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
          'Sets the per-workspace API rate limit and the self-registration mode (`registration_mode`); give at least one. Both apply without a restart. This route is never rate-limited for the owner, so a limit can always be lifted.',
        body: WorkspacePatchSchema,
        response: { 200: WorkspaceSchema, ...errors(400, 404) },
      },
    },
    async (request) => updateWorkspace(fastify, request.body),
  )
}
