// Named OpenAPI components: every resource and list shape a client handles, registered once under
// its name, so generated clients get one reusable type per shape (Channel, Agent, …) instead of
// anonymous inline objects. Routes keep declaring the plain TypeBox schemas (their TypeScript
// types come from them); the openapi plugin swaps each response schema that IS one of these
// objects for a `$ref`, and does the same inside the components themselves (a list's items, a
// page's entries). Matching is by object identity, never by shape, so nothing is swapped by accident.
import type { TSchema } from 'typebox'
import { MeSchema, RegisteredUserSchema, SessionSchema } from '../modules/accounts/schemas.ts'
import { CreatedKeySchema, AgentListSchema, AgentSchema, KeyListSchema, MaskedKeySchema } from '../modules/agents/schemas.ts'
import { BootstrapResultSchema } from '../modules/bootstrap/schemas.ts'
import { AddedMemberSchema, ChannelListItem, ChannelListSchema, ChannelSchema, MemberListSchema, MemberSchema } from '../modules/channels/schemas.ts'
import { DirectoryEntrySchema, DirectorySchema } from '../modules/directory/schemas.ts'
import { DmListSchema, DmSchema } from '../modules/dm/schemas.ts'
import { EventPageSchema } from '../realtime/event-log/schemas.ts'
import { CreatedIntegrationSchema, IntegrationListSchema, IntegrationSchema, RotatedHmacSecretSchema, RotatedKeySchema } from '../modules/integrations/schemas.ts'
import { CreatedInviteSchema, InviteDetailsSchema } from '../modules/invites/schemas.ts'
import { MessagePageSchema, SearchHitSchema, SearchResultSchema } from '../modules/messages/schemas.ts'
import { MessageSchema } from './message.ts'
import { CreatedWebhookSchema, DeliveryPageSchema, DeliverySchema, RotatedSecretSchema, WebhookListSchema, WebhookSchema } from '../modules/webhooks/schemas.ts'
import { WorkspaceSchema } from '../modules/workspace/schemas.ts'
import { EventFrameSchema } from '../realtime/frames.ts'

interface Named {
  name: string
  description: string
  schema: TSchema
}

const NAMED: Named[] = [
  // Messages
  { name: 'Message', description: 'A message in a channel or DM, as REST, the WebSocket, the event log and webhooks all carry it.', schema: MessageSchema },
  { name: 'MessagePage', description: 'A page of messages, newest first, with the cursors for the next page in either direction.', schema: MessagePageSchema },
  { name: 'SearchHit', description: 'One search match: the message (flat and under `message`), its rank and a highlighted snippet.', schema: SearchHitSchema },
  { name: 'SearchResults', description: 'Search matches, best first.', schema: SearchResultSchema },
  // Channels and members
  { name: 'Channel', description: 'A channel (or DM) with its member count and whether the caller is a member.', schema: ChannelSchema },
  { name: 'ChannelSummary', description: 'A channel or DM as listed: id, name, type and description.', schema: ChannelListItem },
  { name: 'ChannelList', description: 'The channels and DMs the caller may read, oldest first.', schema: ChannelListSchema },
  { name: 'Member', description: 'A member of a channel: a human user or an agent.', schema: MemberSchema },
  { name: 'MemberList', description: 'The members of a channel, in joining order.', schema: MemberListSchema },
  { name: 'MemberAdded', description: 'The member just added, with the channel it joined.', schema: AddedMemberSchema },
  { name: 'Dm', description: 'A direct message conversation between the caller and one other participant.', schema: DmSchema },
  { name: 'DmList', description: "The caller's DMs, oldest first.", schema: DmListSchema },
  { name: 'DirectoryEntry', description: 'An agent or a human of the workspace, as pickers list them: type, display name, role.', schema: DirectoryEntrySchema },
  { name: 'Directory', description: 'Everyone in the workspace: agents first, then humans, each by display name.', schema: DirectorySchema },
  // Agents and keys
  { name: 'Agent', description: 'An agent of the workspace (its keys are separate: ApiKey).', schema: AgentSchema },
  { name: 'AgentList', description: 'Every agent of the workspace, oldest first.', schema: AgentListSchema },
  { name: 'ApiKey', description: "An agent's API key as listed: masked, never the key itself.", schema: MaskedKeySchema },
  { name: 'ApiKeyList', description: "An agent's API keys, revoked ones included, masked.", schema: KeyListSchema },
  { name: 'ApiKeyCreated', description: 'A new API key: the only response that shows the full key.', schema: CreatedKeySchema },
  // Accounts and invites
  { name: 'User', description: 'A human user account.', schema: RegisteredUserSchema },
  { name: 'Session', description: 'A login: the JWT and who it belongs to.', schema: SessionSchema },
  { name: 'Me', description: 'The caller: a human (JWT) or an agent (API key).', schema: MeSchema },
  { name: 'Invite', description: 'An invitation just created: the only response that shows its token.', schema: CreatedInviteSchema },
  { name: 'InviteDetails', description: 'What an invite token is for (looked up before accepting it).', schema: InviteDetailsSchema },
  { name: 'Workspace', description: 'Workspace settings.', schema: WorkspaceSchema },
  { name: 'BootstrapResult', description: 'Everything a fresh instance was provisioned with; keys, JWT and invite tokens are shown only here.', schema: BootstrapResultSchema },
  // Events
  { name: 'Event', description: 'One event of the log, as pushed on the WebSocket and listed by GET /api/v1/events.', schema: EventFrameSchema },
  { name: 'EventPage', description: 'A page of the event log, oldest first, with the cursor to continue from.', schema: EventPageSchema },
  // Webhooks, integrations and their deliveries
  { name: 'Webhook', description: "An agent's outbound webhook (its secret is shown only at creation and rotation).", schema: WebhookSchema },
  { name: 'WebhookList', description: "An agent's webhooks.", schema: WebhookListSchema },
  { name: 'WebhookCreated', description: 'A new webhook: the only response (with rotation) that shows its signing secret.', schema: CreatedWebhookSchema },
  { name: 'WebhookSecret', description: 'A rotated webhook signing secret, shown only here.', schema: RotatedSecretSchema },
  { name: 'Delivery', description: 'One event sent (or being sent) to a webhook or an integration, with the outcome of its attempts.', schema: DeliverySchema },
  { name: 'DeliveryPage', description: 'A page of deliveries, newest first.', schema: DeliveryPageSchema },
  { name: 'Integration', description: 'A connection of an external agent platform (its key and secret are shown only at creation and rotation).', schema: IntegrationSchema },
  { name: 'IntegrationList', description: 'Every integration of the workspace.', schema: IntegrationListSchema },
  { name: 'IntegrationCreated', description: 'A new integration: the only response that shows its API key and HMAC secret.', schema: CreatedIntegrationSchema },
  { name: 'IntegrationKey', description: 'A rotated integration API key, shown only here.', schema: RotatedKeySchema },
  { name: 'IntegrationSecret', description: 'A rotated integration HMAC secret, shown only here.', schema: RotatedHmacSecretSchema },
]

const nameOf = new Map<object, string>(NAMED.map((n) => [n.schema, n.name]))

/**
 * A plain-JSON copy of a schema in which every nested named schema becomes `{ $ref: name }`
 * (the root too, unless `keepRoot`). TypeBox's own markers are not enumerable and are left out.
 */
export function withRefs(schema: unknown, keepRoot = false): unknown {
  if (Array.isArray(schema)) return schema.map((s) => withRefs(s))
  if (schema === null || typeof schema !== 'object') return schema
  const name = nameOf.get(schema)
  if (name && !keepRoot) return { $ref: name }
  return Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, withRefs(value)]))
}

/** The components to register with `addSchema`, each under its `$id`, with its description. */
export const COMPONENT_SCHEMAS = NAMED.map(({ name, description, schema }) => ({
  ...(withRefs(schema, true) as Record<string, unknown>),
  $id: name,
  title: name,
  description,
}))

/** Whether `schema` is one of the named components (a response declared with it becomes a `$ref`). */
export const isNamed = (schema: unknown): boolean => typeof schema === 'object' && schema !== null && nameOf.has(schema)
