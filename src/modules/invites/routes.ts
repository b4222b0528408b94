// GET /api/v1/invite?token= and POST /api/v1/invite/accept (no credential), and
// POST /api/v1/invites (the owner invites a human, or sends a new link), GET /api/v1/invites
// (the invites not accepted yet).
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { errors } from '../../schemas/common.ts'
import { assertValidRequest } from '../accounts/rules.ts'
import { SessionSchema } from '../accounts/schemas.ts'
import { AcceptInviteSchema, CreatedInviteSchema, CreateInviteSchema, InviteDetailsSchema, InviteQuerySchema, PendingInviteListSchema } from './schemas.ts'
import { acceptInvite, createInvite, listPendingInvites, validateInvite } from './service.ts'

export default async function invitesRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()

  app.get(
    '/invite',
    {
      config: { auth: 'public' },
      schema: {
        security: [],
        operationId: 'validateInvite',
        tags: ['auth'],
        summary: 'Check an invite token and show who it is for',
        description: 'Errors (400): `INVITE_INVALID` (unknown token), `INVITE_USED`, `INVITE_EXPIRED` (7 days after creation).',
        querystring: InviteQuerySchema,
        response: { 200: InviteDetailsSchema, ...errors(400) },
      },
    },
    async (request) => validateInvite(fastify.ctx, request.query.token),
  )

  app.post(
    '/invite/accept',
    {
      config: { auth: 'public' },
      attachValidation: true,
      schema: {
        security: [],
        operationId: 'acceptInvite',
        tags: ['auth'],
        summary: 'Accept an invite: set the password, activate the account, log in',
        description:
          'Consumes the token (single use, even under concurrent calls) and returns a JWT like login. `email`, if given, must be the invited address, else 400 `INVITE_EMAIL_MISMATCH` and the invite stays usable. `display_name`, if given, replaces the invited one. Errors: `WEAK_PASSWORD`, `INVITE_INVALID`, `INVITE_USED`, `INVITE_EXPIRED`.',
        body: AcceptInviteSchema,
        response: { 200: SessionSchema, ...errors(400) },
      },
    },
    async (request) => {
      assertValidRequest(request)
      return acceptInvite(fastify.ctx, request.body, request.ip)
    },
  )

  app.post(
    '/invites',
    {
      config: { auth: 'owner' },
      attachValidation: true,
      schema: {
        operationId: 'createInvite',
        tags: ['auth'],
        summary: 'Invite a human (workspace owner only)',
        description:
          'Creates an invited user (no password) and an invite valid for 7 days. Inviting someone who has not accepted yet replaces their earlier tokens. An e-mail with an active account gives 409 `EMAIL_TAKEN`.',
        body: CreateInviteSchema,
        response: { 201: CreatedInviteSchema, ...errors(400, 409) },
      },
    },
    async (request, reply) => {
      assertValidRequest(request)
      return reply.code(201).send(await createInvite(fastify.ctx, request.body))
    },
  )

  app.get(
    '/invites',
    {
      config: { auth: 'owner' },
      schema: {
        operationId: 'listInvites',
        tags: ['auth'],
        summary: 'Invites not accepted yet (workspace owner only)',
        description:
          'One item per invited person who has not set a password yet, with the expiry of their latest invite (expired ones too, flagged). Tokens are stored hashed and never listed: to send someone a new link, invite them again with POST /api/v1/invites (same e-mail), which replaces their earlier token.',
        response: { 200: PendingInviteListSchema },
      },
    },
    async () => listPendingInvites(fastify.ctx),
  )
}
