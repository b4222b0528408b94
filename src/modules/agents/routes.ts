// Agents (/api/v1/agents) and their API keys (/api/v1/agents/{id}/keys).
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { errors } from '../../schemas/common.ts'
import type { MemberPrincipal } from '../identity/principal.ts'
import { AgentIdParams, AgentListSchema, AgentSchema, CreateAgentSchema, CreatedKeySchema, CreateKeySchema, KeyListSchema, KeyParams, UpdateAgentSchema } from './schemas.ts'
import * as agents from './service.ts'

const NoContent = Type.Null({ description: 'Done; no body.' })

export default async function agentsRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()

  app.post(
    '/agents',
    {
      config: { auth: 'owner' },
      schema: {
        operationId: 'createAgent',
        tags: ['agents'],
        summary: 'Create an agent (workspace owner only)',
        description: '`display_name` defaults to `name`. A name taken by another agent, ignoring case, gives 409 `NAME_TAKEN`. Create a key for it with `POST /api/v1/agents/{id}/keys`.',
        body: CreateAgentSchema,
        response: { 201: AgentSchema, ...errors(400, 409) },
      },
    },
    async (request, reply) => reply.code(201).send(await agents.createAgent(fastify.ctx, request.principal as MemberPrincipal, request.body)),
  )

  app.get(
    '/agents',
    {
      config: { auth: 'any' },
      schema: {
        operationId: 'listAgents',
        tags: ['agents'],
        summary: 'List all agents of the workspace',
        response: { 200: AgentListSchema },
      },
    },
    async () => agents.listAgents(fastify.ctx),
  )

  app.get(
    '/agents/me',
    {
      config: { auth: 'any' },
      schema: {
        operationId: 'getCurrentAgent',
        tags: ['agents'],
        summary: 'The agent behind the API key',
        description: 'For humans (JWT) this answers 403; use `GET /api/v1/auth/me`.',
        response: { 200: AgentSchema, ...errors(403, 404) },
      },
    },
    async (request) => agents.getSelf(fastify.ctx, request.principal),
  )

  app.get(
    '/agents/:id',
    {
      config: { auth: 'any' },
      schema: {
        operationId: 'getAgent',
        tags: ['agents'],
        summary: 'Get one agent',
        params: AgentIdParams,
        response: { 200: AgentSchema, ...errors(400, 404) },
      },
    },
    async (request) => agents.getAgent(fastify.ctx, request.params.id),
  )

  app.patch(
    '/agents/:id',
    {
      config: { auth: 'any' },
      schema: {
        operationId: 'updateAgent',
        tags: ['agents'],
        summary: 'Update an agent (the owner; or the agent itself, except its name)',
        description: 'Partial update. `null` clears `description`, `avatar_url` or `metadata`.',
        params: AgentIdParams,
        body: UpdateAgentSchema,
        response: { 200: AgentSchema, ...errors(400, 403, 404, 409) },
      },
    },
    async (request) => agents.updateAgent(fastify.ctx, request.principal, request.params.id, request.body),
  )

  app.delete(
    '/agents/:id',
    {
      config: { auth: 'owner' },
      schema: {
        operationId: 'deleteAgent',
        tags: ['agents'],
        summary: 'Delete an agent (workspace owner only)',
        description: 'Revokes its keys, removes it from every channel; its messages stay. The primary agent cannot be deleted (403).',
        params: AgentIdParams,
        response: { 204: NoContent, ...errors(400, 404) },
      },
    },
    async (request, reply) => {
      await agents.deleteAgent(fastify.ctx, request.params.id)
      return reply.code(204).send(null)
    },
  )

  app.post(
    '/agents/:id/keys',
    {
      config: { auth: 'owner' },
      schema: {
        operationId: 'createAgentKey',
        tags: ['agents'],
        summary: 'Create an API key for an agent (workspace owner only)',
        description: 'The full key is in this response only; it is stored as a SHA-256 hash and can never be shown again.',
        params: AgentIdParams,
        body: CreateKeySchema,
        response: { 201: CreatedKeySchema, ...errors(400, 404) },
      },
    },
    async (request, reply) => reply.code(201).send(await agents.createKey(fastify.ctx, request.params.id, request.body.name)),
  )

  app.get(
    '/agents/:id/keys',
    {
      config: { auth: 'any' },
      schema: {
        operationId: 'listAgentKeys',
        tags: ['agents'],
        summary: "List an agent's API keys, masked (the owner or the agent itself)",
        description: 'Revoked keys are listed with `revoked_at`. Neither the key nor its hash is ever returned.',
        params: AgentIdParams,
        response: { 200: KeyListSchema, ...errors(400, 403, 404) },
      },
    },
    async (request) => agents.listKeys(fastify.ctx, request.principal, request.params.id),
  )

  app.delete(
    '/agents/:id/keys/:key_id',
    {
      config: { auth: 'owner' },
      schema: {
        operationId: 'revokeAgentKey',
        tags: ['agents'],
        summary: 'Revoke an API key (workspace owner only)',
        description: 'The key is refused (401) from its next request on. Revoking a revoked key is a no-op (204).',
        params: KeyParams,
        response: { 204: NoContent, ...errors(400, 404) },
      },
    },
    async (request, reply) => {
      await agents.revokeKey(fastify.ctx, request.params.id, request.params.key_id)
      return reply.code(204).send(null)
    },
  )
}
