// POST /api/v1/bootstrap (no credential): provisions a fresh workspace in one atomic step.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { errors } from '../../schemas/common.ts'
import { assertValidRequest } from '../accounts/rules.ts'
import { BootstrapBodySchema, BootstrapResultSchema } from './schemas.ts'
import { bootstrap } from './service.ts'

export default async function bootstrapRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()

  app.post(
    '/bootstrap',
    {
      config: { auth: 'public' },
      attachValidation: true,
      schema: {
        security: [],
        operationId: 'bootstrap',
        tags: ['bootstrap'],
        summary: 'Provision a fresh workspace in one atomic call (bootstrap interface 1.0)',
        description: [
          'Succeeds only while the database holds no user; afterwards 409 `ALREADY_BOOTSTRAPPED`. Creates, in one transaction: the owner user (admin, the login of `primary_agent.email`), the primary agent and its API key, further agents with keys, invited humans (no password until they accept) with 7-day invite tokens, and the default channel (default name `general`) whose members are the primary agent and the humans.',
          'The response has the long form of the specification plus the short form (`primary_agent.id`, `primary_agent.name`, `api_key`, `token`, `channel_id`, `invite_url`, `channel.id`). API keys and invite tokens are shown only here.',
          'Errors (400): `WEAK_PASSWORD` (under 12 characters), `INVALID_EMAIL`, `DUPLICATE_NAME` (an agent name or e-mail repeated in the call, or an agent name already stored), `INVALID_ROLE` (not `member`/`observer`), `VALIDATION_ERROR` (anything else, e.g. a bad agent or channel name). 500 `INTERNAL_ERROR` if the transaction fails; nothing is stored on any failure.',
        ].join('\n\n'),
        body: BootstrapBodySchema,
        response: { 201: BootstrapResultSchema, ...errors(400, 409, 500) },
      },
    },
    async (request, reply) => {
      assertValidRequest(request)
      return reply.code(201).send(await bootstrap(fastify.ctx, request.body, request.ip))
    },
  )
}
