// Dates and labels of the settings screens, in the browser's language and time zone.
import { DEFAULT_INTEGRATION_EVENT_TYPES, INTEGRATION_EVENT_TYPES, PLATFORMS as PLATFORM_LIST, WEBHOOK_EVENT_TYPES } from '../../sdk/frames.ts'

const when = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' })
const day = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' })

export const formatWhen = (iso: string) => when.format(new Date(iso))
export const formatDay = (iso: string) => day.format(new Date(iso))

// The lists come from the SDK, generated from the server's own (src/sdk/frames.ts).
export type WebhookEvent = (typeof WEBHOOK_EVENT_TYPES)[number]
export type IntegrationEvent = (typeof INTEGRATION_EVENT_TYPES)[number]
export type Platform = (typeof PLATFORM_LIST)[number]

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

export const WEBHOOK_EVENTS: readonly WebhookEvent[] = WEBHOOK_EVENT_TYPES
export const INTEGRATION_EVENTS: readonly IntegrationEvent[] = INTEGRATION_EVENT_TYPES
/** What a new integration starts with, as the server's default: the specification's four (reactions are opt-in). */
export const DEFAULT_INTEGRATION_EVENTS: readonly IntegrationEvent[] = DEFAULT_INTEGRATION_EVENT_TYPES

const eventLabels = new Map<string, string>(Object.entries(EVENT_LABELS))
export const eventLabel = (event: string): string => eventLabels.get(event) ?? event

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
export const PLATFORMS: readonly Platform[] = PLATFORM_LIST
const platformLabels = new Map<string, string>(Object.entries(PLATFORM_LABELS))
export const platformLabel = (platform: string): string => platformLabels.get(platform) ?? platform

export const ROLE_LABELS = {
  admin: 'Admin',
  member: 'Member',
  observer: 'Observer',
} as const
