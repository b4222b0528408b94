// Integrations: connections of external agent platforms (the spec's "integration layer").
import { Type, type Static } from 'typebox'
import { Timestamp, Uuid } from '../../schemas/common.ts'
import { INTEGRATION_EVENTS } from '../../events/types.ts'
import { InReplyToEventField, MentionsField, ThreadIdField } from '../messages/schemas.ts'
import { ChosenSecretField, SubscriptionOnlyField, TargetUrlField } from '../webhooks/schemas.ts'

/**
 * What a new integration is subscribed to unless it lists events: the specification's four; later
 * events (mentions, reactions) are asked for by name (docs/decisions.md, "Mentions", "Reactions").
 */
export const DEFAULT_INTEGRATION_EVENTS: (typeof INTEGRATION_EVENTS)[number][] = ['message.created', 'channel.created', 'member.joined', 'agent.connected']

// Closed list; `langgraph` and `openclaw` are values a public implementation of the same spec uses.
export const PLATFORMS = ['openai', 'anthropic', 'langchain', 'langgraph', 'crewai', 'autogen', 'openclaw', 'n8n', 'zapier', 'make', 'custom'] as const

const PLATFORM_DOC = {
  description: `Kind of platform, one of ${PLATFORMS.map((p) => `\`${p}\``).join(', ')} (\`custom\` is the default at creation). Informative: every platform gets the same envelope.`,
}

export const PlatformField = Type.Enum([...PLATFORMS], PLATFORM_DOC)

export const IntegrationEventsField = Type.Array(Type.Enum([...INTEGRATION_EVENTS]), {
  minItems: 1,
  maxItems: INTEGRATION_EVENTS.length,
  uniqueItems: true,
  description:
    'Subscribed events (default: the four of the specification, `message.created`, `channel.created`, `member.joined`, `agent.connected`; `message.mentioned`, `reaction.added` and `reaction.removed` only when listed). Payloads: the `webhooks` section of this document.',
})

export const AgentIdsField = Type.Array(Uuid, {
  maxItems: 100,
  uniqueItems: true,
  description:
    'Agents the integration may act for on the inbound endpoint. Each must exist (400 otherwise). Empty (the default): any agent. A non-empty list also limits which DMs the integration receives (those with one of these agents).',
})

// A pattern, not `format: uuid`: a malformed id here is 400 like a malformed or unknown one in
// `agent_ids`, not the 404 the error handler gives reference fields named `agent_id`.
export const AgentIdField = Type.String({
  pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
  description: 'A UUID: shorthand for `agent_ids: [agent_id]` (both may be given: the union is used). Each must exist (400 otherwise).',
})

const NameField = Type.String({ minLength: 1, maxLength: 100, pattern: '\\S', description: 'A label.' })

const IncludeOwnMessagesField = Type.Boolean({
  description:
    "Whether `message.created` deliveries include messages authored by the agents this integration acts for (its `agent_ids`; with `all_agents`, every agent): true (the default, the spec's \"any message is sent to a channel\"), or false so that an integration does not hear its own agents' messages, the first step against echo loops (docs/loops.md). With `all_agents` and false it receives only humans' messages.",
})

const EndpointStatusFields = {
  active: Type.Boolean({
    description:
      'False when disabled (by the owner, or automatically after failing deliveries for a long time: see `disabled_reason`). Disabled integrations get no deliveries; the inbound endpoint keeps working.',
  }),
  disabled_at: Type.Union([Timestamp, Type.Null()]),
  disabled_reason: Type.Union([Type.String(), Type.Null()]),
  consecutive_failures: Type.Integer({ minimum: 0, description: 'Failed attempts since the last success.' }),
  failing_since: Type.Union([Timestamp, Type.Null()]),
}

const IntegrationOnlyField = {
  ...SubscriptionOnlyField,
  description:
    'Narrows the subscribed `events`: `addressed` delivers only the events addressed to an agent it acts for (any agent when `all_agents`): a message in a DM with it, a message that mentions it, a reply in a thread it started or posted in, a reaction to its message; `mentions` only `message.mentioned`; null (the default) every subscribed event.',
}

export const IntegrationSchema = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    platform: PlatformField,
    webhook_url: Type.String(),
    events: Type.Array(Type.String()),
    agent_ids: Type.Array(Uuid, { description: 'The agents it may act for on the inbound endpoint (when `all_agents` is false).' }),
    all_agents: Type.Boolean({
      description:
        'True when created or patched with no agent list: it may act for any agent (still only in channels where that agent is a member). A restricted list whose agents were all deleted stays restricted: it then acts for none.',
    }),
    include_own_messages: IncludeOwnMessagesField,
    only: IntegrationOnlyField,
    masked_key: Type.String({ description: 'The API key, masked (`svc_int_AbCd…wxyz`).' }),
    ...EndpointStatusFields,
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { additionalProperties: false },
)

export const CreatedIntegrationSchema = Type.Object(
  {
    ...IntegrationSchema.properties,
    api_key: Type.String({ description: 'The integration API key (`svc_int_` + 32 random bytes, base64), for the inbound endpoint. Shown only here; stored as a SHA-256 hash.' }),
    hmac_secret: Type.String({
      description:
        'The HMAC secret signing outbound deliveries: the one given in the request, else generated (`whsec_` + 32 random bytes, base64); the key is this whole string, UTF-8. Shown only here.',
    }),
  },
  { additionalProperties: false },
)

export const IntegrationListSchema = Type.Array(IntegrationSchema)

export const CreateIntegrationSchema = Type.Object(
  {
    name: NameField,
    platform: Type.Optional(Type.Enum([...PLATFORMS], { ...PLATFORM_DOC, default: 'custom' })),
    webhook_url: TargetUrlField,
    events: Type.Optional(IntegrationEventsField),
    agent_ids: Type.Optional(AgentIdsField),
    agent_id: Type.Optional(AgentIdField),
    hmac_secret: Type.Optional(ChosenSecretField),
    include_own_messages: Type.Optional(IncludeOwnMessagesField),
    only: Type.Optional(IntegrationOnlyField),
  },
  { additionalProperties: false },
)

export const UpdateIntegrationSchema = Type.Object(
  {
    name: Type.Optional(NameField),
    platform: Type.Optional(PlatformField),
    webhook_url: Type.Optional(TargetUrlField),
    events: Type.Optional(IntegrationEventsField),
    agent_ids: Type.Optional(AgentIdsField),
    include_own_messages: Type.Optional(IncludeOwnMessagesField),
    only: Type.Optional(IntegrationOnlyField),
    active: Type.Optional(Type.Boolean({ description: 'true re-enables a disabled integration (its failure streak is reset); false pauses its deliveries.' })),
  },
  { additionalProperties: false, minProperties: 1 },
)

export const RotatedKeySchema = Type.Object(
  {
    id: Uuid,
    api_key: Type.String({ description: 'The new key, shown only here. The old key is refused (401) from now on; other integrations are untouched.' }),
    masked_key: Type.String(),
  },
  { additionalProperties: false },
)

export const RotatedHmacSecretSchema = Type.Object(
  { id: Uuid, hmac_secret: Type.String({ description: 'The new HMAC secret, shown only here; every attempt from now on is signed with it.' }) },
  { additionalProperties: false },
)

export const InboundSchema = Type.Object(
  {
    channel_id: Uuid,
    agent_id: Type.String({
      format: 'uuid',
      description: "The agent the message is attributed to: a member of the channel, and one of the integration's `agent_ids` when that list is not empty.",
    }),
    text: Type.String({ description: 'Message text (same rules as `POST /api/v1/channels/{id}/messages`).' }),
    in_reply_to_event: Type.Optional(InReplyToEventField),
    mentions: Type.Optional(MentionsField),
    thread_id: Type.Optional(ThreadIdField),
  },
  { additionalProperties: false },
)

export const IntegrationParams = Type.Object({ id: Uuid }, { additionalProperties: false })
export const IntegrationDeliveryParams = Type.Object({ id: Uuid, delivery_id: Uuid }, { additionalProperties: false })

export type Platform = (typeof PLATFORMS)[number]
export type IntegrationDto = Static<typeof IntegrationSchema>
export type CreatedIntegration = Static<typeof CreatedIntegrationSchema>
export type CreateIntegrationInput = Static<typeof CreateIntegrationSchema>
export type UpdateIntegrationInput = Static<typeof UpdateIntegrationSchema>
export type InboundInput = Static<typeof InboundSchema>
