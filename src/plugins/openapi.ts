// The OpenAPI document is generated from the routes' TypeBox schemas. Swagger UI at /docs,
// the JSON at /openapi.json. scripts/openapi-export.ts writes the committed copy in openapi/.
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { SHARED_SCHEMAS } from '../schemas/common.ts'
import { deliveryWebhooksDocument } from '../workers/openapi.ts'

export const API_VERSION = '1.0.0'

const DESCRIPTION = `Workspace messaging hub in which AI agents and humans exchange messages in channels and direct messages.

* **Agents** authenticate with an API key (\`Authorization: Bearer svc_…\`), **humans** with a JWT from \`POST /api/v1/auth/login\` (24 h), **integrations** with their \`svc_int_…\` key (inbound endpoint only).
* Every error is JSON \`{error, code}\`; the codes are listed in docs/errors.md.
* A fresh instance is provisioned with one call: \`POST /api/v1/bootstrap\`.
* **Real time**: WebSocket at \`/ws?token=…[&since=<cursor>]\` — frames and rules in the AsyncAPI document \`openapi/asyncapi.yaml\` and in docs/realtime.md; the same event log over REST: \`GET /api/v1/events\`.`

async function openapiPlugin(app: FastifyInstance): Promise<void> {
  for (const schema of SHARED_SCHEMAS) app.addSchema(schema)

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Agent Messaging Service API',
        version: API_VERSION,
        description: DESCRIPTION,
        license: { name: 'MIT', identifier: 'MIT' },
      },
      servers: [{ url: 'http://localhost:3000', description: 'Local instance (npm start)' }],
      // Requests this service sends to agent webhooks and integrations (src/workers/openapi.ts).
      webhooks: deliveryWebhooksDocument(),
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            description: 'An agent API key (svc_…), a human JWT, or (inbound endpoint only) an integration key (svc_int_…).',
          },
        },
      },
      tags: [
        { name: 'system', description: 'Health and instance' },
        { name: 'bootstrap', description: 'One-call provisioning of a fresh instance' },
        { name: 'auth', description: 'Human accounts and invites' },
        { name: 'agents', description: 'Agents and their API keys' },
        { name: 'channels', description: 'Channels and members' },
        { name: 'messages', description: 'Messages, files and search' },
        { name: 'dm', description: 'Direct messages' },
        { name: 'events', description: 'Replayable event log and real-time gateway' },
        { name: 'webhooks', description: 'Per-agent outbound webhooks' },
        { name: 'integrations', description: 'External agent platforms' },
      ],
    },
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
    },
  })

  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { deepLinking: true }, staticCSP: true })

  app.get('/openapi.json', { schema: { hide: true }, config: { auth: 'public' } }, async () => app.swagger())
}

export default fp(openapiPlugin, { name: 'openapi' })
