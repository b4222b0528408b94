// Approval requests (docs/approvals.md): read, decide, cancel; and the caller's "needs your
// decision" list. The request itself is posted as a message (POST /channels/{id}/messages).
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { MemberPrincipal } from '../identity/principal.ts'
import { errors } from '../../schemas/common.ts'
import { ChannelMessageParams } from '../messages/schemas.ts'
import { AlreadyDecided } from './service.ts'
import * as approvals from './service.ts'
import { ApprovalSchema } from '../../schemas/approval.ts'
import { AlreadyDecidedSchema, DecideBody, PendingApprovalsQuery } from './schemas.ts'

const member = (request: FastifyRequest): MemberPrincipal => request.principal as MemberPrincipal

/** 409 ALREADY_DECIDED carries the outcome that stands. */
async function settled<T>(reply: FastifyReply, run: () => Promise<T>): Promise<T | FastifyReply> {
  try {
    return await run()
  } catch (error) {
    if (error instanceof AlreadyDecided) return reply.code(409).send({ error: error.message, code: 'ALREADY_DECIDED', approval: error.approval })
    throw error
  }
}

export default async function approvalRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()

  app.get(
    '/channels/:id/messages/:message_id/approval',
    {
      config: { auth: 'any' },
      schema: {
        operationId: 'getApproval',
        tags: ['approvals'],
        summary: 'Read an approval request and its outcome',
        description: 'Readers of the channel (404 otherwise, and for a message that carries no request).',
        params: ChannelMessageParams,
        response: { 200: ApprovalSchema, ...errors(400, 404) },
      },
    },
    async (request) => approvals.getApproval(fastify.ctx, member(request), request.params.id, request.params.message_id),
  )

  app.post(
    '/channels/:id/messages/:message_id/approval',
    {
      config: { auth: 'any' },
      schema: {
        operationId: 'decideApproval',
        tags: ['approvals'],
        summary: 'Decide an approval request: approve, deny, edit or respond',
        description:
          "Eligible humans only: the request's `approvers` (`members`: any human member of the channel, or the workspace owner; `owner`; or the listed users). A non-reader of the channel: 404; an agent, an observer or a person not among the approvers: 403; a choice the request does not offer, `arguments` without `edit`, `edit` without `arguments`, `respond` without a `comment`: 400. The request must still be exactly what was posted (its `digest`), and the one given, if any: otherwise 409 `CONFLICT`. The first valid decision wins; a later one (or one after a cancellation or the expiry) gets 409 `ALREADY_DECIDED` with the outcome that stands. Emits `approval.decided`, addressed to the requesting agent.",
        params: ChannelMessageParams,
        body: DecideBody,
        response: {
          200: ApprovalSchema,
          ...errors(400, 403, 404),
          409: { ...Type.Union([AlreadyDecidedSchema, Type.Ref('Error')]), description: '`ALREADY_DECIDED` (with the outcome that stands), or `CONFLICT` (the request is not what was shown).' },
        },
      },
    },
    async (request, reply) => settled(reply, () => approvals.decide(fastify.ctx, member(request), request.params.id, request.params.message_id, request.body)),
  )

  app.post(
    '/channels/:id/messages/:message_id/approval/cancel',
    {
      config: { auth: 'any' },
      schema: {
        operationId: 'cancelApproval',
        tags: ['approvals'],
        summary: 'Cancel a pending approval request (the agent that asked)',
        description: 'The requesting agent only (anyone else who reads the channel: 403). Once settled: 409 `ALREADY_DECIDED` with the outcome. Emits `approval.cancelled`.',
        params: ChannelMessageParams,
        response: { 200: ApprovalSchema, ...errors(400, 403, 404), 409: AlreadyDecidedSchema },
      },
    },
    async (request, reply) => settled(reply, () => approvals.cancel(fastify.ctx, member(request), request.params.id, request.params.message_id)),
  )

  app.get(
    '/approvals/pending',
    {
      config: { auth: 'any' },
      schema: {
        operationId: 'listPendingApprovals',
        tags: ['approvals'],
        summary: 'Needs your decision: pending requests the caller may decide',
        description: 'Soonest expiry first, in the channels the caller reads. Agents and observers never decide: their list is empty.',
        querystring: PendingApprovalsQuery,
        response: { 200: Type.Object({ approvals: Type.Array(ApprovalSchema) }, { additionalProperties: false }), ...errors(400) },
      },
    },
    async (request) => approvals.pendingForCaller(fastify.ctx, member(request), request.query.limit ?? 50),
  )
}
