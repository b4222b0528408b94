import { Type, type Static } from 'typebox'
import { Timestamp, Uuid } from '../../schemas/common.ts'
import { AgentNameField, DisplayNameField, MetadataField, nullable, UrlField } from '../accounts/rules.ts'

export const DescriptionField = Type.String({ maxLength: 2000 })

export const AGENT_STATUS_MAX_LENGTH = 100
export const AGENT_STATUS_MAX_SECONDS = 86_400
export const AGENT_STATUS_DEFAULT_SECONDS = 3_600

export const AgentStatusSchema = Type.Object(
  {
    text: Type.String({ description: `At most ${AGENT_STATUS_MAX_LENGTH} characters.` }),
    expires_at: Timestamp,
  },
  { additionalProperties: false, description: "An agent's short status, e.g. `reviewing PR 42`." },
)

export type AgentStatus = Static<typeof AgentStatusSchema>

export const SetAgentStatusBody = Type.Object(
  {
    text: Type.String({ minLength: 1, maxLength: AGENT_STATUS_MAX_LENGTH, pattern: '\\S', description: `1 to ${AGENT_STATUS_MAX_LENGTH} characters, not only spaces.` }),
    expires_in_seconds: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: AGENT_STATUS_MAX_SECONDS,
        default: AGENT_STATUS_DEFAULT_SECONDS,
        description: `How long it shows: 1 to ${AGENT_STATUS_MAX_SECONDS} seconds (one day); default ${AGENT_STATUS_DEFAULT_SECONDS}.`,
      }),
    ),
  },
  { additionalProperties: false },
)

export const AgentSchema = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    display_name: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    avatar_url: Type.Union([Type.String(), Type.Null()]),
    metadata: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()]),
    is_primary: Type.Boolean({ description: 'The agent created by bootstrap as the workspace admin; it cannot be deleted.' }),
    created_at: Timestamp,
    updated_at: Timestamp,
    // ---- presence and status (docs/decisions.md, "Typing and presence") ----
    online: Type.Boolean({ description: 'Whether the agent has an open WebSocket on any instance.' }),
    last_seen_at: Type.Union([Timestamp, Type.Null()], { description: 'When a socket of the agent last opened or closed; null if it never connected.' }),
    status: Type.Union([AgentStatusSchema, Type.Null()], { description: 'Its short status (`PUT /agents/me/status`); null when none or expired.' }),
  },
  { additionalProperties: false },
)

export const AgentListSchema = Type.Array(AgentSchema)

export const CreateAgentSchema = Type.Object(
  {
    name: AgentNameField,
    display_name: Type.Optional(DisplayNameField),
    description: Type.Optional(DescriptionField),
    avatar_url: Type.Optional(UrlField),
    metadata: Type.Optional(MetadataField),
  },
  { additionalProperties: false },
)

export const UpdateAgentSchema = Type.Object(
  {
    name: Type.Optional(AgentNameField),
    display_name: Type.Optional(DisplayNameField),
    description: Type.Optional(nullable(DescriptionField)),
    avatar_url: Type.Optional(nullable(UrlField)),
    metadata: Type.Optional(nullable(MetadataField)),
  },
  { additionalProperties: false, minProperties: 1 },
)

export const KeyNameField = Type.String({ minLength: 1, maxLength: 100, pattern: '\\S', description: 'A label for the key.' })

export const CreateKeySchema = Type.Object({ name: KeyNameField }, { additionalProperties: false })

export const CreatedKeySchema = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    key: Type.String({ description: 'The full key (`svc_` + 32 random bytes, base64). Shown only here, never again.' }),
    masked_key: Type.String(),
    created_at: Timestamp,
  },
  { additionalProperties: false },
)

export const MaskedKeySchema = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    masked_key: Type.String({ description: 'Prefix, first and last four characters, e.g. `svc_AbCd…wxyz`.' }),
    created_at: Timestamp,
    revoked_at: Type.Union([Timestamp, Type.Null()]),
  },
  { additionalProperties: false },
)

export const KeyListSchema = Type.Array(MaskedKeySchema)

export const AgentIdParams = Type.Object({ id: Uuid }, { additionalProperties: false })
export const KeyParams = Type.Object({ id: Uuid, key_id: Uuid }, { additionalProperties: false })

export type AgentDto = Static<typeof AgentSchema>
export type CreateAgentInput = Static<typeof CreateAgentSchema>
export type UpdateAgentInput = Static<typeof UpdateAgentSchema>
export type CreatedKey = Static<typeof CreatedKeySchema>
export type MaskedKey = Static<typeof MaskedKeySchema>
