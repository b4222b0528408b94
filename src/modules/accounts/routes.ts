// POST /api/v1/auth/register, POST /api/v1/auth/login, GET /api/v1/auth/me.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { errors } from '../../schemas/common.ts'
import { assertValidRequest } from './rules.ts'
import { LoginBodySchema, MeSchema, RegisterBodySchema, RegisteredUserSchema, SessionSchema } from './schemas.ts'
import { describeCaller, login, register } from './service.ts'

export default async function accountsRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()

  app.post(
    '/auth/register',
    {
      config: { auth: 'public' },
      attachValidation: true,
      schema: {
        security: [],
        operationId: 'register',
        tags: ['auth'],
        summary: 'Create a human account (member role)',
        description:
          'Open once the workspace is bootstrapped (403 before). The account is a `member` that belongs to no channel until someone adds it. Errors: `WEAK_PASSWORD`, `INVALID_EMAIL`, `EMAIL_TAKEN`.',
        body: RegisterBodySchema,
        response: { 201: RegisteredUserSchema, ...errors(400, 403, 409) },
      },
    },
    async (request, reply) => {
      assertValidRequest(request)
      return reply.code(201).send(await register(fastify, request.body))
    },
  )

  app.post(
    '/auth/login',
    {
      config: { auth: 'public' },
      schema: {
        security: [],
        operationId: 'login',
        tags: ['auth'],
        summary: 'Log in a human user; returns a 24-hour JWT',
        description: 'A wrong e-mail and a wrong password give the same 401, after the same work.',
        body: LoginBodySchema,
        response: { 200: SessionSchema, ...errors(400, 401) },
      },
    },
    async (request) => login(fastify, request.body),
  )

  app.get(
    '/auth/me',
    {
      config: { auth: 'any' },
      schema: {
        operationId: 'getMe',
        tags: ['auth'],
        summary: 'Who am I: the human or agent behind the credential',
        response: { 200: MeSchema },
      },
    },
    async (request) => describeCaller(request.principal),
  )
}
