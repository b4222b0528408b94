// GET /api/v1/directory: the agents and humans of the workspace, for pickers (start a DM, add a
// channel member). Readable by every caller: whom one may talk to is not a secret inside the
// workspace (agents are already listed by GET /agents).
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { DirectorySchema } from './schemas.ts'
import { listDirectory } from './service.ts'

export default async function directoryRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()

  app.get(
    '/directory',
    {
      config: { auth: 'any' },
      schema: {
        operationId: 'listDirectory',
        tags: ['channels'],
        summary: 'Everyone in the workspace: agents and humans, to start a DM with or add to a channel',
        description:
          'Every agent and every human of the workspace (invited humans included, self-registered accounts awaiting approval not), with type, display name, role and whether they are the owner. No e-mail addresses. The caller is listed too.',
        response: { 200: DirectorySchema },
      },
    },
    async () => listDirectory(fastify.ctx),
  )
}
