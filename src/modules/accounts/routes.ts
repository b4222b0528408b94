// POST /api/v1/auth/register, POST /api/v1/auth/login, GET /api/v1/auth/me, the registrations
// awaiting approval, and GET /api/v1/users (the people of the workspace).
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { errors, IdParams } from '../../schemas/common.ts'
import { assertValidRequest } from './rules.ts'
import type { HumanPrincipal } from '../identity/principal.ts'
import {
  LoginBodySchema,
  MeSchema,
  PeopleListSchema,
  RegisterBodySchema,
  RegisteredUserSchema,
  RegistrationInfoSchema,
  RegistrationListSchema,
  SessionSchema,
  UpdatedMeSchema,
  UpdateMeBodySchema,
} from './schemas.ts'
import { approveRegistration, describeCaller, listPeople, listRegistrations, login, register, registrationInfo, rejectRegistration, updateMe } from './service.ts'

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
          'Open once the workspace is bootstrapped (403 before). The account is a `member` that belongs to no channel until someone adds it. The workspace setting `registration_mode` (PATCH /api/v1/workspace) decides what it may do: `open` — everything a member may; `approval` (the default) — it can log in but every request other than GET /api/v1/auth/me answers 403 `APPROVAL_PENDING` until the owner approves it (POST /api/v1/registrations/{id}/approve); `closed` — registration answers 403 `REGISTRATION_CLOSED`. Errors: `WEAK_PASSWORD`, `INVALID_EMAIL`, `EMAIL_TAKEN`.',
        body: RegisterBodySchema,
        response: { 201: RegisteredUserSchema, ...errors(400, 403, 409) },
      },
    },
    async (request, reply) => {
      assertValidRequest(request)
      return reply.code(201).send(await register(fastify.ctx, request.body, request.ip))
    },
  )

  app.get(
    '/auth/registration',
    {
      config: { auth: 'public' },
      schema: {
        security: [],
        operationId: 'getRegistration',
        tags: ['auth'],
        summary: 'Whether people may sign up, for the sign-up page (no credential)',
        description: "The workspace's `registration_mode` (`closed` before bootstrap), so a sign-up page can say what will happen before the form is sent.",
        response: { 200: RegistrationInfoSchema },
      },
    },
    async () => registrationInfo(fastify.ctx),
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
        description:
          "A wrong e-mail and a wrong password give the same 401, after the same work. After `LOGIN_FAILURES_PER_ACCOUNT` failures for one e-mail, or `LOGIN_FAILURES_PER_ADDRESS` from one client address, within `LOGIN_FAILURE_WINDOW_SECONDS`, further attempts answer 429 `RATE_LIMITED` with `Retry-After` (a successful login clears the account's count). Password checks are queued fairly per client address and per account: many attempts on one account, or from one address, wait behind other people's logins; beyond half the queue for one account or address (or a full queue), the newest attempts of the busiest caller answer 503 `SERVICE_UNAVAILABLE` with `Retry-After` (after a 1 s pause).",
        body: LoginBodySchema,
        response: { 200: SessionSchema, ...errors(400, 401, 503) },
      },
    },
    async (request) => login(fastify.ctx, request.body, request.ip),
  )

  app.get(
    '/registrations',
    {
      config: { auth: 'owner' },
      schema: {
        operationId: 'listRegistrations',
        tags: ['auth'],
        summary: 'Self-registered accounts awaiting approval (workspace owner only)',
        response: { 200: RegistrationListSchema },
      },
    },
    async () => listRegistrations(fastify.ctx),
  )

  app.post(
    '/registrations/:id/approve',
    {
      config: { auth: 'owner' },
      schema: {
        operationId: 'approveRegistration',
        tags: ['auth'],
        summary: 'Approve a self-registered account (workspace owner only)',
        description: 'The account becomes an ordinary member from its next request on. 404 when no account with this id awaits approval.',
        params: IdParams,
        response: { 200: RegisteredUserSchema, ...errors(400, 404) },
      },
    },
    async (request) => approveRegistration(fastify.ctx, request.params.id),
  )

  app.delete(
    '/registrations/:id',
    {
      config: { auth: 'owner' },
      schema: {
        operationId: 'rejectRegistration',
        tags: ['auth'],
        summary: 'Refuse a self-registered account (workspace owner only)',
        description: 'Deletes the account awaiting approval (its e-mail may register again). 404 when no account with this id awaits approval.',
        params: IdParams,
        response: { 204: Type.Null({ description: 'Done; no body.' }), ...errors(400, 404) },
      },
    },
    async (request, reply) => {
      await rejectRegistration(fastify.ctx, request.params.id)
      return reply.code(204).send(null)
    },
  )

  app.get(
    '/users',
    {
      config: { auth: 'any' },
      schema: {
        operationId: 'listUsers',
        tags: ['auth'],
        summary: 'The people of the workspace: humans with an active account and their roles',
        description:
          'Any agent or human of the workspace may read it (to find someone to add to a channel or to write to); integration keys get 401. Invited people who have not accepted yet are listed by GET /api/v1/invites, accounts awaiting approval by GET /api/v1/registrations (both for the workspace owner).',
        response: { 200: PeopleListSchema },
      },
    },
    async () => listPeople(fastify.ctx),
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

  app.patch(
    '/auth/me',
    {
      config: { auth: 'human' },
      attachValidation: true,
      schema: {
        operationId: 'updateMe',
        tags: ['auth'],
        summary: "Change the signed-in human's profile: display name, avatar, password",
        description:
          "Any of `display_name`, `avatar_url` (an http(s) URL, or null to remove it) and a password change (`new_password` with `current_password`, both or neither). Answers the caller as GET /api/v1/auth/me does. A password change ends every session issued before it, this one included: the answer's `session.token` replaces the caller's token, and other devices must log in again (their sockets close with 4401). Errors: `WRONG_PASSWORD` (400; nothing changed; counts towards the account's login limit, then 429 `RATE_LIMITED`), `WEAK_PASSWORD`, `VALIDATION_ERROR`. Agents (API keys): 403; an account awaiting approval: 403 `APPROVAL_PENDING`. A new name or avatar is pushed to every connected WebSocket as a `user_updated` frame.",
        body: UpdateMeBodySchema,
        response: { 200: UpdatedMeSchema, ...errors(400, 403, 429) },
      },
    },
    async (request) => {
      assertValidRequest(request)
      return updateMe(fastify.ctx, request.principal as HumanPrincipal, request.body, request.ip)
    },
  )
}
