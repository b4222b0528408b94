import { Type, type Static } from 'typebox'
import { Timestamp, Uuid } from '../../schemas/common.ts'
import { AgentNameField, DisplayNameField, EmailField, HumanRoleField, MetadataField, PasswordField, UrlField } from '../accounts/rules.ts'

export const MAX_BOOTSTRAP_ITEMS = 100

const AgentProfile = Type.Object(
  {
    name: AgentNameField,
    display_name: DisplayNameField,
    description: Type.Optional(Type.String({ maxLength: 2000 })),
    avatar_url: Type.Optional(UrlField),
    metadata: Type.Optional(MetadataField),
  },
  { additionalProperties: false },
)

export const ChannelNameField = Type.String({
  minLength: 1,
  maxLength: 100,
  pattern: '^(?! *$)[A-Za-z0-9 -]+$',
  description: 'Letters, digits, hyphens and spaces, 1-100 characters, not only spaces.',
})

export const BootstrapBodySchema = Type.Object(
  {
    primary_agent: Type.Object(
      {
        email: EmailField,
        password: PasswordField,
        display_name: Type.Optional({
          ...DisplayNameField,
          description: "The owner's own name as people see it (1-255 characters, not blank); default: the e-mail's local part. Not the primary agent's name (that is `agent_profile.display_name`).",
        }),
        agent_profile: AgentProfile,
      },
      { additionalProperties: false, description: 'The workspace owner (a human admin who logs in with this e-mail and password) and the primary agent.' },
    ),
    agents: Type.Optional(Type.Array(AgentProfile, { maxItems: MAX_BOOTSTRAP_ITEMS, description: 'Further agents; names unique within the call, ignoring case.' })),
    humans: Type.Optional(
      Type.Array(
        Type.Object(
          {
            email: EmailField,
            display_name: Type.Optional(DisplayNameField),
            role: Type.Optional(HumanRoleField),
          },
          { additionalProperties: false },
        ),
        { maxItems: MAX_BOOTSTRAP_ITEMS, description: 'Humans to invite; e-mails unique within the call.' },
      ),
    ),
    default_channel: Type.Optional(
      Type.Object(
        {
          name: Type.Optional(ChannelNameField),
          topic: Type.Optional(Type.String({ maxLength: 250 })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
)

const ApiKeyField = Type.String({ description: 'API key (`svc_…`); shown only in this response.' })

export const BootstrapResultSchema = Type.Object(
  {
    primary_agent: Type.Object(
      {
        user_id: Uuid,
        agent_id: Uuid,
        email: Type.String(),
        jwt_token: Type.String({ description: 'JWT of the owner user; expires after 24 hours.' }),
        api_key: ApiKeyField,
        api_key_id: Uuid,
        id: Type.String({ format: 'uuid', description: 'Short form: same as `agent_id`.' }),
        name: Type.String({ description: 'Short form: the agent name.' }),
        display_name: Type.String({ description: "The primary agent's display name." }),
        owner_display_name: Type.String({ description: "The owner's display name (`primary_agent.display_name` of the request, or the e-mail's local part)." }),
      },
      { additionalProperties: false },
    ),
    agents: Type.Array(
      Type.Object(
        {
          agent_id: Uuid,
          id: Type.String({ format: 'uuid', description: 'Same as `agent_id`.' }),
          name: Type.String(),
          display_name: Type.String(),
          api_key: ApiKeyField,
          api_key_id: Uuid,
        },
        { additionalProperties: false },
      ),
    ),
    humans: Type.Array(
      Type.Object(
        {
          user_id: Uuid,
          email: Type.String(),
          display_name: Type.String(),
          role: Type.Enum(['member', 'observer']),
          invite_token: Type.String({ description: '`inv_…`; valid 7 days, single use; shown only here.' }),
          invite_url: Type.String({ description: '`{frontend_url}/invite?token=<invite_token>` (token percent-encoded).' }),
          expires_at: Timestamp,
        },
        { additionalProperties: false },
      ),
    ),
    channel: Type.Object(
      {
        channel_id: Uuid,
        id: Type.String({ format: 'uuid', description: 'Short form: same as `channel_id`.' }),
        name: Type.String(),
        topic: Type.Union([Type.String(), Type.Null()]),
        members: Type.Array(Uuid, { description: 'The primary agent and the invited humans.' }),
      },
      { additionalProperties: false },
    ),
    instance_id: Uuid,
    api_key: Type.String({ description: 'Short form: the primary agent’s API key.' }),
    token: Type.String({ description: 'Short form: the owner’s JWT (same as `primary_agent.jwt_token`).' }),
    channel_id: Type.String({ format: 'uuid', description: 'Short form: the default channel id.' }),
    invite_url: Type.Union([Type.String(), Type.Null()], { description: 'Short form: the first human’s invite URL (null without humans).' }),
  },
  { additionalProperties: false },
)

export type BootstrapBody = Static<typeof BootstrapBodySchema>
export type BootstrapResult = Static<typeof BootstrapResultSchema>
