// The outbound webhook contract: the OpenAPI 3.1 `webhooks` section, every request this service
// sends to agent webhooks and integrations, with its headers and body, so receivers can be
// generated like clients. Derived from the event catalog (./catalog.ts): the agent webhook body is
// the envelope around the event's payload, the integration body the spec's envelope around the
// entry's integration payload. Registered through the openapi plugin's options
// (src/plugins/openapi.ts).
import type { OpenAPIV3_1 } from 'openapi-types'
import { Type, type TObject, type TSchema } from 'typebox'
import { EVENTS } from './catalog.ts'
import type { EventCatalog } from './define.ts'
import { typesWith } from './types.ts'

const Uuid = Type.String({ format: 'uuid' })
const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC timestamp.' })

/** Plain JSON (TypeBox schemas carry symbol keys; `$id`s would clash with the components). */
const json = (schema: TSchema): Record<string, unknown> => {
  const copy = JSON.parse(JSON.stringify(schema)) as Record<string, unknown>
  delete copy.$id
  return copy
}

const header = (name: string, description: string, schema: Record<string, unknown> = { type: 'string' }) => ({
  name,
  in: 'header',
  required: true,
  description,
  schema,
})

const WEBHOOK_HEADERS = [
  header('X-Webhook-Signature', '`sha256=` + hex HMAC-SHA256 of the raw body, keyed with the webhook secret (the whole `whsec_…` string, UTF-8).', {
    type: 'string',
    pattern: '^sha256=[0-9a-f]{64}$',
  }),
  header('X-Webhook-Timestamp', 'Unix time (seconds) of this attempt.', { type: 'string', pattern: '^[0-9]+$' }),
  header('X-Webhook-Timestamp-Signature', '`sha256=` + hex HMAC-SHA256 of `<X-Webhook-Timestamp>.<raw body>`: reject it when the timestamp is more than 5 minutes off (replay protection).', {
    type: 'string',
    pattern: '^sha256=[0-9a-f]{64}$',
  }),
  header('X-Webhook-Delivery-ID', 'Delivery id, the same on every attempt of this delivery: de-duplicate on it.', { type: 'string', format: 'uuid' }),
  header('X-Webhook-Event', 'Event type, as in the body.'),
  header('X-Webhook-Event-ID', 'Event id, as in the body.', { type: 'string', format: 'uuid' }),
  header('X-Webhook-ID', 'The webhook this delivery is for.', { type: 'string', format: 'uuid' }),
  header('X-Webhook-Attempt', 'Attempt number, 1 for the first.', { type: 'string', pattern: '^[0-9]+$' }),
]

const INTEGRATION_HEADERS = [
  header('X-Service-Event', 'Event type.'),
  header('X-Service-Integration-ID', 'The integration id.', { type: 'string', format: 'uuid' }),
  header('X-Service-Signature', "`sha256=` + hex HMAC-SHA256 of the raw body, keyed with the integration's HMAC secret (the whole `whsec_…` string, UTF-8).", {
    type: 'string',
    pattern: '^sha256=[0-9a-f]{64}$',
  }),
  header('X-Service-Timestamp', 'Unix time (seconds) of this attempt.', { type: 'string', pattern: '^[0-9]+$' }),
  header('X-Service-Timestamp-Signature', '`sha256=` + hex HMAC-SHA256 of `<X-Service-Timestamp>.<raw body>` (replay protection).', { type: 'string', pattern: '^sha256=[0-9a-f]{64}$' }),
  header('X-Service-Delivery-ID', 'Delivery id, the same on every attempt of this delivery.', { type: 'string', format: 'uuid' }),
  header('X-Service-Event-ID', 'Event id (the same for every integration receiving this event).', { type: 'string', format: 'uuid' }),
  header('X-Service-Attempt', 'Attempt number, 1 for the first.', { type: 'string', pattern: '^[0-9]+$' }),
]

const RESPONSES = {
  '2XX': { description: 'Received. Any 2xx within the timeout (10 s by default) counts as delivered; the body is ignored.' },
  '401': { description: 'Signature mismatch (the receiver should answer 401). Like every non-2xx answer, timeout or network error, the delivery is retried with backoff (docs/webhooks.md).' },
}

const camel = (event: string): string => event.replace(/(^|[._])(\w)/g, (_m, _sep, c: string) => c.toUpperCase())

function operation(kind: 'webhook' | 'integration', event: string, when: string, body: Record<string, unknown>) {
  const agent = kind === 'webhook'
  return {
    post: {
      operationId: `${agent ? 'agentWebhook' : 'integration'}${camel(event)}`,
      tags: [agent ? 'webhooks' : 'integrations'],
      summary: `${event} → ${agent ? 'agent webhook' : 'integration webhook_url'}`,
      description: `${when} POSTed to the ${agent ? 'webhook `url`' : "integration's `webhook_url`"} with \`Content-Type: application/json\`; the body is byte-identical on every attempt.`,
      // No bearer credential: the receiver authenticates the request by its signature headers.
      security: [],
      parameters: agent ? WEBHOOK_HEADERS : INTEGRATION_HEADERS,
      requestBody: { required: true, content: { 'application/json': { schema: body } } },
      responses: RESPONSES,
    },
  }
}

/** The body of an agent webhook delivery of this event (src/workers/payloads.ts builds it). */
export function webhookBodySchema(event: string, payload: TSchema): TObject {
  return Type.Object(
    {
      event_id: Type.String({ format: 'uuid', description: 'Unique per event; the same for every webhook receiving it.' }),
      event_type: Type.Literal(event),
      occurred_at: Timestamp,
      webhook_id: Uuid,
      agent_id: Type.String({ format: 'uuid', description: 'The agent the webhook belongs to.' }),
      payload,
    },
    { additionalProperties: false },
  )
}

/** The body of an integration delivery of this event: the spec's envelope. */
export function integrationBodySchema(event: string, payload: TSchema): TObject {
  return Type.Object(
    { event_type: Type.Literal(event), integration_id: Uuid, occurred_at: Timestamp, payload },
    { additionalProperties: false, description: 'The envelope of every integration delivery.' },
  )
}

/** The OpenAPI `webhooks` section of a catalog (the published one: `deliveryWebhooksDocument()`). */
export function deliveryWebhooksDocument(catalog: EventCatalog = EVENTS): Record<string, OpenAPIV3_1.PathItemObject> {
  const webhooks: Record<string, unknown> = {}
  for (const event of typesWith(catalog, 'webhook')) {
    const spec = catalog[event]!
    webhooks[`agent-webhook.${event}`] = operation('webhook', event, spec.webhook!.when, json(webhookBodySchema(event, spec.payload)))
  }
  for (const event of typesWith(catalog, 'integration')) {
    const { when, payload } = catalog[event]!.integration!
    webhooks[`integration.${event}`] = operation('integration', event, when, json(integrationBodySchema(event, payload)))
  }
  return webhooks as Record<string, OpenAPIV3_1.PathItemObject>
}
