// Reactions on messages: PUT adds the caller's, DELETE removes it (both idempotent).
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { MemberPrincipal } from '../identity/principal.ts'
import { errors } from '../../schemas/common.ts'
import { MessageReactionsSchema, ReactionParams } from './schemas.ts'
import * as reactions from './service.ts'

const NoContent = Type.Null({ description: 'Done (also when there was no such reaction); no body.' })
const member = (request: FastifyRequest): MemberPrincipal => request.principal as MemberPrincipal
const WHO =
  'Members of the channel who may post (observers: 403; the workspace owner in a channel it has not joined: 403). A channel the caller cannot read, or a message not in it: 404. An emoji that is not one emoji nor a `:shortcode:`: 400 `INVALID_EMOJI`.'

export default async function reactionsRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()

  app.put(
    '/channels/:id/messages/:message_id/reactions/:emoji',
    {
      config: { auth: 'any' },
      schema: {
        operationId: 'addReaction',
        tags: ['messages'],
        summary: 'React to a message (idempotent)',
        description: `Adds the caller's reaction; adding the same one again changes nothing and emits nothing. Emits \`reaction.added\`. ${WHO}`,
        params: ReactionParams,
        response: { 200: MessageReactionsSchema, ...errors(400, 403, 404) },
      },
    },
    async (request) => reactions.setReaction(fastify.ctx, member(request), request.params.id, request.params.message_id, request.params.emoji, true),
  )

  app.delete(
    '/channels/:id/messages/:message_id/reactions/:emoji',
    {
      config: { auth: 'any' },
      schema: {
        operationId: 'removeReaction',
        tags: ['messages'],
        summary: "Take back one's reaction (idempotent)",
        description: `Removes the caller's reaction: 204, also when there was none (then nothing is emitted). Emits \`reaction.removed\`. ${WHO}`,
        params: ReactionParams,
        response: { 204: NoContent, ...errors(400, 403, 404) },
      },
    },
    async (request, reply) => {
      await reactions.setReaction(fastify.ctx, member(request), request.params.id, request.params.message_id, request.params.emoji, false)
      return reply.code(204).send(null)
    },
  )
}
