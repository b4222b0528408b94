// Direct messages (/api/v1/dm). Messages in a DM use the channel message endpoints.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import type { MemberPrincipal } from '../identity/principal.ts'
import { errors } from '../../schemas/common.ts'
import { IdempotencyHeaders } from '../idempotency/schemas.ts'
import { idempotencyKeyOf } from '../idempotency/service.ts'
import { CreateDmBody, DmListSchema, DmSchema, type DmDto } from './schemas.ts'
import * as dm from './service.ts'

export default async function dmRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()

  app.post(
    '/dm',
    {
      config: { auth: 'any' },
      schema: {
        operationId: 'openDm',
        tags: ['dm'],
        summary: 'Open the DM with a user or an agent (201 created, 200 existing)',
        description:
          'Returns the pair’s DM whichever of the two asks (200), or creates it (201) with both as members; exactly one per pair, also under concurrent calls. Yourself: 400 `SELF_DM`; an unknown id: 404; observers: 403. Creating emits `channel.created` (type `dm`) and two `member.joined`.',
        headers: IdempotencyHeaders,
        body: CreateDmBody,
        response: { 200: DmSchema, 201: DmSchema, ...errors(400, 403, 404, 409) },
      },
    },
    async (request, reply) => {
      const result = await dm.openDm(fastify.ctx, request.principal as MemberPrincipal, request.body.participant_id, idempotencyKeyOf(request))
      return reply.code(result.statusCode as 201).send(result.body as DmDto)
    },
  )

  app.get(
    '/dm',
    {
      config: { auth: 'any' },
      schema: {
        operationId: 'listDms',
        tags: ['dm'],
        summary: "The caller's DMs, each with the other participant",
        response: { 200: DmListSchema },
      },
    },
    async (request) => dm.listDms(fastify.ctx, request.principal as MemberPrincipal),
  )
}
