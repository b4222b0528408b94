// The OpenAPI 3.1 `webhooks` section: every request this service sends to agent webhooks and
// integrations, with its headers and body, so receivers can be generated like clients.
// Registered through the openapi plugin's options (src/plugins/openapi.ts).
import type { OpenAPIV3_1 } from 'openapi-types'
import { Type, type TSchema } from 'typebox'
import { MessageSchema } from '../modules/messages/schemas.ts'
import { INTEGRATION_EVENTS, WEBHOOK_EVENTS } from './payloads.ts'

const Uuid = Type.String({ format: 'uuid' })
const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC timestamp.' })
const ActorUpper = Type.Enum(['AGENT', 'HUMAN'])
const ActorLower = Type.Enum(['agent', 'human'], { description: 'Lower case.' })
const Nullable = (s: TSchema): TSchema => Type.Union([s, Type.Null()])

/** Plain JSON (TypeBox schemas carry symbol keys; `$id`s would clash with the components). */
const json = (schema: TSchema): Record<string, unknown> => {
  const copy = JSON.parse(JSON.stringify(schema)) as Record<string, unknown>
  delete copy.$id
  return copy
}

const ChannelInfo = Type.Object(
  { id: Uuid, name: Type.String(), description: Type.String(), topic: Nullable(Type.String()), type: Type.Enum(['channel', 'dm']), created_at: Timestamp },
  { additionalProperties: true },
)

/** Payloads of agent webhooks: the domain events as the service emits them. */
const WEBHOOK_PAYLOADS: Record<(typeof WEBHOOK_EVENTS)[number], { when: string; payload: TSchema }> = {
  'message.created': { when: 'A message was posted in a channel the agent belongs to (its own messages included).', payload: Type.Object({ message: MessageSchema }) },
  'message.updated': { when: 'A message was edited in a channel the agent belongs to.', payload: Type.Object({ message: MessageSchema }) },
  'message.deleted': { when: 'A message was deleted in a channel the agent belongs to.', payload: Type.Object({ message_id: Uuid, channel_id: Uuid }) },
  'channel.created': {
    when: 'A channel (or DM) the agent is a member of was created.',
    payload: Type.Object({ channel: ChannelInfo, creator_id: Uuid, creator_type: ActorUpper }),
  },
  'channel.updated': { when: 'A channel the agent belongs to was renamed or changed.', payload: Type.Object({ channel: ChannelInfo }) },
  'channel.deleted': { when: 'A channel the agent belonged to was deleted.', payload: Type.Object({ channel_id: Uuid }) },
  'member.joined': {
    when: 'A user or agent joined a channel the agent belongs to (the agent itself included).',
    payload: Type.Object({ channel_id: Uuid, member_id: Uuid, member_type: ActorUpper, member_name: Type.String() }),
  },
  'member.left': {
    when: 'A member left or was removed from a channel the agent belongs to (or the agent itself was removed).',
    payload: Type.Object({ channel_id: Uuid, member_id: Uuid, member_type: ActorUpper }),
  },
}

/** Payloads of integration deliveries (message.created exactly as the spec lists it). */
const INTEGRATION_PAYLOADS: Record<(typeof INTEGRATION_EVENTS)[number], { when: string; payload: TSchema }> = {
  'message.created': {
    when: 'Any message was sent to a channel (including through the inbound endpoint). DMs only when one of the integration\'s `agent_ids` takes part (any agent when that list is empty).',
    payload: Type.Object(
      { message_id: Uuid, channel_id: Uuid, author_id: Uuid, author_type: ActorLower, text: Type.String() },
      { additionalProperties: false },
    ),
  },
  'channel.created': {
    when: 'A new channel was created (a DM only when one of the integration\'s `agent_ids` takes part, any agent when that list is empty).',
    payload: Type.Object(
      {
        channel_id: Uuid,
        name: Type.String(),
        description: Nullable(Type.String()),
        topic: Nullable(Type.String()),
        type: Type.Enum(['channel', 'dm']),
        created_at: Timestamp,
        creator_id: Nullable(Uuid),
        creator_type: Nullable(ActorLower),
      },
      { additionalProperties: false },
    ),
  },
  'member.joined': {
    when: 'A user or agent was added to a channel (in a DM only when one of the integration\'s `agent_ids` takes part, any agent when that list is empty).',
    payload: Type.Object({ channel_id: Uuid, member_id: Uuid, member_type: ActorLower, member_name: Nullable(Type.String()) }, { additionalProperties: false }),
  },
  'agent.connected': {
    when: 'An agent authenticated on the WebSocket.',
    payload: Type.Object({ agent_id: Uuid, agent_name: Type.String(), connected_at: Timestamp }, { additionalProperties: false }),
  },
}

const header = (name: string, description: string, schema: Record<string, unknown> = { type: 'string' }) => ({
  name,
  in: 'header',
  required: true,
  description,
  schema,
})

const WEBHOOK_HEADERS = [
  header('X-Webhook-Signature', '`sha256=` + hex HMAC-SHA256 of the raw body, keyed with the webhook secret (the whole `whsec_…` string, UTF-8).', { type: 'string', pattern: '^sha256=[0-9a-f]{64}$' }),
  header('X-Webhook-Timestamp', 'Unix time (seconds) of this attempt.', { type: 'string', pattern: '^[0-9]+$' }),
  header('X-Webhook-Timestamp-Signature', '`sha256=` + hex HMAC-SHA256 of `<X-Webhook-Timestamp>.<raw body>`: reject it when the timestamp is more than 5 minutes off (replay protection).', { type: 'string', pattern: '^sha256=[0-9a-f]{64}$' }),
  header('X-Webhook-Delivery-ID', 'Delivery id, the same on every attempt of this delivery: de-duplicate on it.', { type: 'string', format: 'uuid' }),
  header('X-Webhook-Event', 'Event type, as in the body.'),
  header('X-Webhook-Event-ID', 'Event id, as in the body.', { type: 'string', format: 'uuid' }),
  header('X-Webhook-ID', 'The webhook this delivery is for.', { type: 'string', format: 'uuid' }),
  header('X-Webhook-Attempt', 'Attempt number, 1 for the first.', { type: 'string', pattern: '^[0-9]+$' }),
]

const INTEGRATION_HEADERS = [
  header('X-Service-Event', 'Event type.'),
  header('X-Service-Integration-ID', 'The integration id.', { type: 'string', format: 'uuid' }),
  header('X-Service-Signature', '`sha256=` + hex HMAC-SHA256 of the raw body, keyed with the integration\'s HMAC secret (the whole `whsec_…` string, UTF-8).', { type: 'string', pattern: '^sha256=[0-9a-f]{64}$' }),
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

function webhookEnvelope(event: string, payload: TSchema): Record<string, unknown> {
  return json(
    Type.Object(
      {
        event_id: Type.String({ format: 'uuid', description: 'Unique per event; the same for every webhook receiving it.' }),
        event_type: Type.Literal(event),
        occurred_at: Timestamp,
        webhook_id: Uuid,
        agent_id: Type.String({ format: 'uuid', description: 'The agent the webhook belongs to.' }),
        payload,
      },
      { additionalProperties: false },
    ),
  )
}

function integrationEnvelope(event: string, payload: TSchema): Record<string, unknown> {
  return json(
    Type.Object(
      { event_type: Type.Literal(event), integration_id: Uuid, occurred_at: Timestamp, payload },
      { additionalProperties: false, description: 'The envelope of every integration delivery.' },
    ),
  )
}

export function deliveryWebhooksDocument(): Record<string, OpenAPIV3_1.PathItemObject> {
  const webhooks: Record<string, unknown> = {}
  for (const event of WEBHOOK_EVENTS) {
    const { when, payload } = WEBHOOK_PAYLOADS[event]
    webhooks[`agent-webhook.${event}`] = operation('webhook', event, when, webhookEnvelope(event, payload))
  }
  for (const event of INTEGRATION_EVENTS) {
    const { when, payload } = INTEGRATION_PAYLOADS[event]
    webhooks[`integration.${event}`] = operation('integration', event, when, integrationEnvelope(event, payload))
  }
  return webhooks as Record<string, OpenAPIV3_1.PathItemObject>
}
