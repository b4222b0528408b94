// Typing (REST clients) and an agent's short status. Both are pushed as ephemeral WebSocket
// frames (`typing`, `agent_status`); neither is a message or an event of the log.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { MemberPrincipal } from '../identity/principal.ts'
import { errors, IdParams } from '../../schemas/common.ts'
import { AgentStatusSchema, SetAgentStatusBody } from '../agents/schemas.ts'
import * as presence from './service.ts'

const NoContent = Type.Null({ description: 'Done; no body.' })
const member = (request: FastifyRequest): MemberPrincipal => request.principal as MemberPrincipal

export default async function presenceRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()

  app.post(
    '/channels/:id/typing',
    {
      config: { auth: 'any' },
      schema: {
        operationId: 'sendTyping',
        tags: ['channels'],
        summary: 'Say that the caller is typing in a channel',
        description:
          'Pushes a `typing` frame to the other members of the channel who are connected by WebSocket (not to the caller; not stored, not in the event log, not sent to webhooks). At most one per caller and channel every 3 seconds is passed on; extras answer 204 too and are dropped. Members who may post only: observers 403, the workspace owner in a channel it has not joined 403; a channel the caller cannot see 404. WebSocket clients send `{"type":"typing","channel_id":…}` instead.',
        params: IdParams,
        response: { 204: NoContent, ...errors(400, 403, 404) },
      },
    },
    async (request, reply) => {
      await presence.typing(fastify.ctx, member(request), request.params.id)
      return reply.code(204).send(null)
    },
  )

  app.put(
    '/agents/me/status',
    {
      config: { auth: 'any' },
      schema: {
        operationId: 'setAgentStatus',
        tags: ['agents'],
        summary: "Set the calling agent's short status",
        description:
          'E.g. `{"text": "reviewing PR 42", "expires_in_seconds": 600}`. Shown on the agent object (`status`) and in the directory (`status_text`) until it expires (default one hour, at most one day), and pushed as an `agent_status` frame to the members of the agent\'s channels. Humans (JWT): 403.',
        body: SetAgentStatusBody,
        response: { 200: AgentStatusSchema, ...errors(400, 403) },
      },
    },
    async (request) => presence.setStatus(fastify.ctx, request.principal, request.body),
  )

  app.delete(
    '/agents/me/status',
    {
      config: { auth: 'any' },
      schema: {
        operationId: 'clearAgentStatus',
        tags: ['agents'],
        summary: "Clear the calling agent's status",
        description: 'Also when none is set. Pushes an `agent_status` frame with `text: null`. Humans (JWT): 403.',
        response: { 204: NoContent, ...errors(403) },
      },
    },
    async (request, reply) => {
      await presence.clearStatus(fastify.ctx, request.principal)
      return reply.code(204).send(null)
    },
  )
}
