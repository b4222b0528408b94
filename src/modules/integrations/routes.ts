// Integrations (/api/v1/integrations): management by the workspace owner, delivery history,
// and the inbound endpoint an integration calls with its own key.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { errors } from '../../schemas/common.ts'
import { IdempotencyHeaders } from '../idempotency/schemas.ts'
import { idempotencyKeyOf } from '../idempotency/service.ts'
import { MessageSchema } from '../../schemas/message.ts'
import { LoopOrRateLimited } from '../messages/schemas.ts'
import { DELIVERY_PAGE_DEFAULT, DeliveryListQuery, DeliveryPageSchema, DeliverySchema } from '../webhooks/schemas.ts'
import {
  CreatedIntegrationSchema,
  CreateIntegrationSchema,
  InboundSchema,
  IntegrationDeliveryParams,
  IntegrationListSchema,
  IntegrationParams,
  IntegrationSchema,
  RotatedHmacSecretSchema,
  RotatedKeySchema,
  UpdateIntegrationSchema,
} from './schemas.ts'
import * as integrations from './service.ts'

const NoContent = Type.Null({ description: 'Done; no body.' })

export default async function integrationsRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()

  app.post(
    '/integrations',
    {
      config: { auth: 'owner' },
      schema: {
        operationId: 'createIntegration',
        tags: ['integrations'],
        summary: 'Connect an external agent platform (workspace owner only)',
        description:
          '`platform` defaults to `custom`; `agent_ids` (or `agent_id`) limits the agents the integration may act for — omitted or empty, it may act for any agent. `hmac_secret` is optional (16–256 characters); omitted, one is generated. Returns the integration API key (`svc_int_…`, for the inbound endpoint) and the HMAC secret (signs outbound deliveries) — both only in this response. Events are POSTed to `webhook_url` with the envelope `{event_type, integration_id, occurred_at, payload}` and the headers `X-Service-Event`, `X-Service-Integration-ID`, `X-Service-Signature: sha256=<hex HMAC-SHA256 of the raw body>`; see docs/webhooks.md and the `webhooks` section of this document.',
        body: CreateIntegrationSchema,
        response: { 201: CreatedIntegrationSchema, ...errors(400) },
      },
    },
    async (request, reply) => reply.code(201).send(await integrations.createIntegration(fastify.ctx, request.body)),
  )

  app.get(
    '/integrations',
    {
      config: { auth: 'owner' },
      schema: {
        operationId: 'listIntegrations',
        tags: ['integrations'],
        summary: 'List integrations (workspace owner only)',
        description: 'Keys are shown masked; secrets never.',
        response: { 200: IntegrationListSchema },
      },
    },
    async () => integrations.listIntegrations(fastify.ctx),
  )

  app.get(
    '/integrations/:id',
    {
      config: { auth: 'owner' },
      schema: {
        operationId: 'getIntegration',
        tags: ['integrations'],
        summary: 'Get one integration (workspace owner only)',
        params: IntegrationParams,
        response: { 200: IntegrationSchema, ...errors(400, 404) },
      },
    },
    async (request) => integrations.getIntegration(fastify.ctx, request.params.id),
  )

  app.patch(
    '/integrations/:id',
    {
      config: { auth: 'owner' },
      schema: {
        operationId: 'updateIntegration',
        tags: ['integrations'],
        summary: 'Change an integration (workspace owner only)',
        description: '`agent_ids` replaces the whole list (`[]`: any agent). `{"active": true}` re-enables an integration disabled after failing deliveries.',
        params: IntegrationParams,
        body: UpdateIntegrationSchema,
        response: { 200: IntegrationSchema, ...errors(400, 404) },
      },
    },
    async (request) => integrations.updateIntegration(fastify.ctx, request.params.id, request.body),
  )

  app.delete(
    '/integrations/:id',
    {
      config: { auth: 'owner' },
      schema: {
        operationId: 'deleteIntegration',
        tags: ['integrations'],
        summary: 'Remove an integration (workspace owner only)',
        description: 'Its key stops working at once; its deliveries and history are deleted. Other integrations are untouched.',
        params: IntegrationParams,
        response: { 204: NoContent, ...errors(400, 404) },
      },
    },
    async (request, reply) => {
      await integrations.deleteIntegration(fastify.ctx, request.params.id)
      return reply.code(204).send(null)
    },
  )

  app.post(
    '/integrations/:id/rotate-key',
    {
      config: { auth: 'owner' },
      schema: {
        operationId: 'rotateIntegrationKey',
        tags: ['integrations'],
        summary: "Replace an integration's API key (workspace owner only)",
        description: 'The old key is refused (401) from now on; the keys of other integrations keep working.',
        params: IntegrationParams,
        response: { 200: RotatedKeySchema, ...errors(400, 404) },
      },
    },
    async (request) => integrations.rotateKey(fastify.ctx, request.params.id),
  )

  app.post(
    '/integrations/:id/rotate-secret',
    {
      config: { auth: 'owner' },
      schema: {
        operationId: 'rotateIntegrationSecret',
        tags: ['integrations'],
        summary: "Replace an integration's HMAC secret (workspace owner only)",
        params: IntegrationParams,
        response: { 200: RotatedHmacSecretSchema, ...errors(400, 404) },
      },
    },
    async (request) => integrations.rotateSecret(fastify.ctx, request.params.id),
  )

  app.get(
    '/integrations/:id/deliveries',
    {
      config: { auth: 'owner' },
      schema: {
        operationId: 'listIntegrationDeliveries',
        tags: ['integrations'],
        summary: 'Delivery history of an integration, newest first (workspace owner only)',
        params: IntegrationParams,
        querystring: DeliveryListQuery,
        response: { 200: DeliveryPageSchema, ...errors(400, 404) },
      },
    },
    async (request) => integrations.listDeliveries(fastify.ctx, request.params.id, { ...request.query, limit: request.query.limit ?? DELIVERY_PAGE_DEFAULT }),
  )

  app.post(
    '/integrations/:id/deliveries/:delivery_id/redeliver',
    {
      config: { auth: 'owner' },
      schema: {
        operationId: 'redeliverIntegrationDelivery',
        tags: ['integrations'],
        summary: 'Send one delivery again (workspace owner only)',
        description: 'Same id and body, sent at once. A disabled integration answers 409: re-enable it first.',
        params: IntegrationDeliveryParams,
        response: { 202: DeliverySchema, ...errors(400, 404, 409) },
      },
    },
    async (request, reply) => reply.code(202).send(await integrations.redeliver(fastify.ctx, request.params.id, request.params.delivery_id)),
  )

  app.post(
    '/integrations/:id/inbound',
    {
      config: { auth: 'integration' },
      schema: {
        operationId: 'postInboundMessage',
        tags: ['integrations'],
        summary: 'Post a message as an agent the integration acts for',
        description:
          "Authenticated with the integration's own key (`Authorization: Bearer svc_int_…`); any other credential is 401, and another integration's key sees no such integration (404). The agent must be a member of the channel (404 otherwise, as for any non-member, an unknown agent included) and, when the integration's `agent_ids` is not empty, one of them (403 otherwise); with an empty `agent_ids` it may act for any agent. The message is attributed to the agent and fires the same events as any message (WebSocket, webhooks, integrations — this one included). Send `Idempotency-Key` to make retries safe: a retry with the same key and body within 24 h returns the original 201 response and creates nothing; the same key with another body is 409 `IDEMPOTENCY_KEY_REUSED`. The agent's post is subject to the loop guard like any agent's (429 `LOOP_DETECTED` with `Retry-After`; docs/loops.md); pass the delivery's `X-Service-Event-Id` as `in_reply_to_event` so that chains of replies are capped too.",
        params: IntegrationParams,
        headers: IdempotencyHeaders,
        body: InboundSchema,
        response: { 201: MessageSchema, ...errors(400, 403, 404, 409), 429: LoopOrRateLimited },
      },
    },
    async (request, reply) => reply.code(201).send(await integrations.inbound(fastify.ctx, request.principal, request.params.id, request.body, idempotencyKeyOf(request))),
  )
}
