// The OpenAPI document is generated from the routes' TypeBox schemas. Swagger UI at /docs,
// the JSON at /openapi.json. scripts/openapi-export.ts writes the committed copy in openapi/.
import swagger, { type SwaggerTransformObject } from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { ERROR_COMPONENT_DESCRIPTION, SHARED_SCHEMAS } from '../schemas/common.ts'
import { COMPONENT_SCHEMAS, isNamed, withRefs } from '../schemas/components.ts'
import { deliveryWebhooksDocument } from '../events/openapi.ts'
import { collapseEnums, nameInlineObjects } from './openapi-shapes.ts'
import capturedExamples from '../../openapi/examples.json' with { type: 'json' }

export const API_VERSION = '1.0.0'

const DESCRIPTION = `Workspace messaging hub in which AI agents and humans exchange messages in channels and direct messages.

* **Agents** authenticate with an API key (\`Authorization: Bearer svc_…\`), **humans** with a JWT from \`POST /api/v1/auth/login\` (24 h), **integrations** with their \`svc_int_…\` key (inbound endpoint only).
* Every error is JSON \`{error, code}\`; the codes are listed in docs/errors.md.
* A fresh instance is provisioned with one call: \`POST /api/v1/bootstrap\`.
* **Real time**: WebSocket at \`/ws?token=…[&since=<cursor>]\` — frames and rules in the AsyncAPI document \`openapi/asyncapi.yaml\` and in docs/realtime.md; the same event log over REST: \`GET /api/v1/events\` (long polling with \`wait\`), and as Server-Sent Events: \`GET /api/v1/events/stream\`.`

async function openapiPlugin(app: FastifyInstance): Promise<void> {
  for (const schema of [...SHARED_SCHEMAS, ...COMPONENT_SCHEMAS]) app.addSchema(schema)

  // A response declared with a named schema (src/schemas/components.ts) is answered and
  // documented through its component: `{ $ref: 'Channel' }` instead of an inline copy.
  app.addHook('onRoute', (route) => {
    const response = (route.schema as { response?: Record<string, unknown> } | undefined)?.response
    if (!response) return
    for (const [status, schema] of Object.entries(response)) if (isNamed(schema)) response[status] = withRefs(schema)
  })

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Agent Messaging Service API',
        version: API_VERSION,
        description: DESCRIPTION,
        license: { name: 'MIT', identifier: 'MIT' },
      },
      // Relative: Swagger UI and generated clients talk to the address the document came from,
      // whatever PORT or PUBLIC_URL (docs/decisions.md, "Contract").
      servers: [{ url: '/', description: 'This instance (the address this document was fetched from)' }],
      // Requests this service sends to agent webhooks and integrations (src/events/openapi.ts).
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
        { name: 'approvals', description: 'Human approval in the conversation: an agent asks, a person decides (docs/approvals.md)' },
        { name: 'dm', description: 'Direct messages' },
        { name: 'events', description: 'Replayable event log and real-time gateway' },
        { name: 'webhooks', description: 'Per-agent outbound webhooks' },
        { name: 'integrations', description: 'External agent platforms' },
      ],
    },
    // The document's own types are looser than the few fields completeDocument touches.
    transformObject: (doc) => ('openapiObject' in doc ? completeDocument(doc.openapiObject as OpenApiDocument) : doc.swaggerObject) as ReturnType<SwaggerTransformObject>,
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
    },
  })

  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { deepLinking: true },
    staticCSP: true,
    // The library's CSP ends with `upgrade-insecure-requests`: over plain http by a host name (the
    // Docker image reached from another machine) the browser then fetches the scripts over https,
    // which nothing serves, and the page stays blank. Same-origin requests need no upgrade.
    transformStaticCSP: (header) => header.replace(/\s*upgrade-insecure-requests;?/, ''),
  })

  app.get('/openapi.json', { schema: { hide: true }, config: { auth: 'public' } }, async () => app.swagger())
}

export default fp(openapiPlugin, { name: 'openapi' })

type OpenApiMedia = { schema?: { $ref?: string }; encoding?: Record<string, unknown>; examples?: Record<string, { summary: string; value: unknown }> }
type OpenApiResponse = { description?: string; content?: Record<string, OpenApiMedia> }
type OpenApiParameter = { name: string; in: string; example?: unknown }
type OpenApiOperation = { operationId?: string; summary?: string; parameters?: OpenApiParameter[]; responses?: Record<string, OpenApiResponse>; requestBody?: OpenApiResponse }
type OpenApiDocument = { paths?: Record<string, Record<string, OpenApiOperation>> }

/** What each error status means on any route; a route's own description wins when it has one. */
const ERROR_DESCRIPTIONS: Record<string, string> = {
  400: 'Bad input (`VALIDATION_ERROR` or another 400 code of docs/errors.md); nothing was changed.',
  401: 'Missing, invalid, expired or revoked credentials (`UNAUTHORIZED`).',
  403: 'The caller may see the resource but not do this (`FORBIDDEN`), e.g. a role or an owner-only action.',
  404: 'Not found, or not visible to the caller (`NOT_FOUND`): both answer the same.',
  409: 'Conflicts with the current state (`CONFLICT`, `NAME_TAKEN`, `ALREADY_MEMBER`, … see docs/errors.md).',
  410: 'No longer available (`GONE`).',
  413: 'Request body too large (`PAYLOAD_TOO_LARGE`).',
  415: 'Unsupported Content-Type (`UNSUPPORTED_MEDIA_TYPE`).',
  500: 'Unexpected server failure (`INTERNAL_ERROR`); nothing is leaked.',
  503: 'A dependency is unavailable or the server is shutting down (`SERVICE_UNAVAILABLE`); retry later.',
}

interface Example {
  url: string
  request?: unknown
  status: number
  response?: unknown
}

const EXAMPLES: Record<string, Example> = capturedExamples

const EXAMPLE_SUMMARY = 'A real exchange, captured from the test suite (npm run openapi:examples)'

/** Puts an operation's captured exchange into the document: parameters, request and response bodies. */
function addExample(template: string, operation: OpenApiOperation, example: Example): void {
  const [pathname = '', query = ''] = example.url.split('?')
  const templateParts = template.split('/')
  const actualParts = pathname.split('/')
  const values = new Map<string, string>()
  templateParts.forEach((part, i) => {
    const name = /^\{(.+)\}$/.exec(part)?.[1]
    if (name && actualParts[i] !== undefined) values.set(`path:${name}`, decodeURIComponent(actualParts[i]))
  })
  for (const [name, value] of new URLSearchParams(query)) values.set(`query:${name}`, value)
  for (const parameter of operation.parameters ?? []) {
    const value = values.get(`${parameter.in}:${parameter.name}`)
    if (value === undefined) continue
    parameter.example = /^\d+$/.test(value) && parameter.in === 'query' ? Number(value) : value
  }
  const requestMedia = operation.requestBody?.content?.['application/json']
  if (requestMedia && example.request !== undefined) requestMedia.examples = { captured: { summary: EXAMPLE_SUMMARY, value: example.request } }
  const responseMedia = operation.responses?.[String(example.status)]?.content?.['application/json']
  if (responseMedia && example.response !== undefined) responseMedia.examples = { captured: { summary: EXAMPLE_SUMMARY, value: example.response } }
}

/**
 * Finishing touches Fastify's generator cannot express: a real description for every response
 * (no "Default Response"), the `encoding` of multipart uploads so generators send a file part,
 * and one real exchange per operation (openapi/examples.json, captured from the tests).
 */
function completeDocument<T extends OpenApiDocument>(doc: T): T {
  for (const [template, operations] of Object.entries(doc.paths ?? {})) {
    for (const operation of Object.values(operations)) {
      const example = operation.operationId ? EXAMPLES[operation.operationId] : undefined
      if (example) addExample(template, operation, example)
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        // Error responses inherit the Error component's generic description: say what the status means.
        const generic = !response.description || response.description === 'Default Response' || response.description === ERROR_COMPONENT_DESCRIPTION
        if (!generic) continue
        response.description = ERROR_DESCRIPTIONS[status] ?? `${operation.summary ?? 'Success'}: done.`
      }
      const form = operation.requestBody?.content?.['multipart/form-data']
      if (form) form.encoding = { file: { contentType: 'application/octet-stream, */*' } }
    }
  }
  // String enums as `enum`, every response and delivery object a named component (./openapi-shapes.ts).
  collapseEnums(doc)
  nameInlineObjects(doc)
  return doc
}
