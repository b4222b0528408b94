// GET /api/v1/mentions: the messages that mention the caller.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import type { MemberPrincipal } from '../identity/principal.ts'
import { errors } from '../../schemas/common.ts'
import { ListMentionsQuery, MENTION_PAGE_DEFAULT, MentionPageSchema } from './schemas.ts'
import { listMentions } from '../messages/service.ts'

export default async function mentionRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()

  app.get(
    '/mentions',
    {
      config: { auth: 'any' },
      schema: {
        operationId: 'listMentions',
        tags: ['messages'],
        summary: "The caller's mentions, newest first",
        description:
          'Messages whose `mentions` include the caller, in the channels and DMs the caller may read now (a channel one has left no longer counts), newest first. Page with `cursor` = `next_cursor` while `has_more`; `since` keeps only messages posted after a time.',
        querystring: ListMentionsQuery,
        response: { 200: MentionPageSchema, ...errors(400) },
      },
    },
    async (request) => listMentions(fastify.ctx, request.principal as MemberPrincipal, { ...request.query, limit: request.query.limit ?? MENTION_PAGE_DEFAULT }),
  )
}
