// Dates and labels of the settings screens, in the browser's language and time zone.
import type { paths } from '../../sdk/schema.d.ts'

const when = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' })
const day = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' })

export const formatWhen = (iso: string) => when.format(new Date(iso))
export const formatDay = (iso: string) => day.format(new Date(iso))

type JsonBody<P extends keyof paths, M extends 'post'> = paths[P][M] extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never

export type WebhookEvent = NonNullable<JsonBody<'/api/v1/agents/{id}/webhooks', 'post'>['events']>[number]
export type IntegrationEvent = NonNullable<JsonBody<'/api/v1/integrations', 'post'>['events']>[number]
export type Platform = NonNullable<JsonBody<'/api/v1/integrations', 'post'>['platform']>

// Records over the API's own enums: a value added to the API and not named here fails the build.
const EVENT_LABELS: Record<WebhookEvent | IntegrationEvent, string> = {
  'message.created': 'A message is posted',
  'message.updated': 'A message is edited',
  'message.deleted': 'A message is deleted',
  'channel.created': 'A channel is created',
  'channel.updated': 'A channel is renamed or described',
  'channel.deleted': 'A channel is deleted',
  'member.joined': 'Someone joins a channel',
  'member.left': 'Someone leaves a channel',
  'agent.connected': 'An agent connects',
  'message.mentioned': 'A message mentions the agent',
  'reaction.added': 'Someone reacts to a message',
  'reaction.removed': 'Someone takes back a reaction',
  'approval.decided': 'Someone decides an approval request',
  'approval.expired': 'An approval request expires undecided',
  'approval.cancelled': 'An agent cancels its approval request',
  'message.stream_started': 'An agent starts writing a reply live',
  'message.stop_requested': "Someone presses Stop on the agent's live reply",
}

const WEBHOOK_EVENT_SET: Record<WebhookEvent, true> = {
  'message.created': true,
  'message.updated': true,
  'message.deleted': true,
  'channel.created': true,
  'channel.updated': true,
  'channel.deleted': true,
  'member.joined': true,
  'member.left': true,
  'message.mentioned': true,
  'reaction.added': true,
  'reaction.removed': true,
  'approval.decided': true,
  'approval.expired': true,
  'approval.cancelled': true,
  'message.stream_started': true,
  'message.stop_requested': true,
}
const INTEGRATION_EVENT_SET: Record<IntegrationEvent, true> = {
  'message.created': true,
  'channel.created': true,
  'member.joined': true,
  'reaction.added': true,
  'reaction.removed': true,
  'agent.connected': true,
  'message.mentioned': true,
  'approval.decided': true,
  'approval.expired': true,
  'approval.cancelled': true,
}

export const WEBHOOK_EVENTS = Object.keys(WEBHOOK_EVENT_SET) as WebhookEvent[]
export const INTEGRATION_EVENTS = Object.keys(INTEGRATION_EVENT_SET) as IntegrationEvent[]
/** What a new integration starts with, as the server's default: the specification's four (reactions are opt-in). */
export const DEFAULT_INTEGRATION_EVENTS: IntegrationEvent[] = ['message.created', 'channel.created', 'member.joined', 'agent.connected']

export const eventLabel = (event: string): string => EVENT_LABELS[event as WebhookEvent] ?? event

const PLATFORM_LABELS: Record<Platform, string> = {
  custom: 'Custom',
  openai: 'OpenAI',
  anthropic: 'Anthropic',
  langchain: 'LangChain',
  langgraph: 'LangGraph',
  crewai: 'CrewAI',
  autogen: 'AutoGen',
  openclaw: 'OpenClaw',
  n8n: 'n8n',
  zapier: 'Zapier',
  make: 'Make',
}
export const PLATFORMS = Object.keys(PLATFORM_LABELS) as Platform[]
export const platformLabel = (platform: string): string => PLATFORM_LABELS[platform as Platform] ?? platform

export const ROLE_LABELS = {
  admin: 'Admin',
  member: 'Member',
  observer: 'Observer',
} as const
