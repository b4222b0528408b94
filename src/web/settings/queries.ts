// The owner's settings: the query keys they are cached under and the API calls that read and
// change agents, their keys and webhooks, integrations, invites, sign-ups, people and the
// workspace. Components use these keys, never arrays of their own.
import { useQuery } from '@tanstack/react-query'
import type { paths } from '../../sdk/client.ts'
import { api, unwrap } from '../api/client.ts'
import type { DeliveryStatus } from './DeliveryHistory.tsx'

export const settingsKeys = {
  agents: ['agents'] as const,
  agent: (id: string) => ['agent', id] as const,
  keys: (agentId: string) => ['keys', agentId] as const,
  webhooks: (agentId: string) => ['webhooks', agentId] as const,
  webhookDeliveries: (webhookId: string) => ['webhook-deliveries', webhookId] as const,
  integrations: ['integrations'] as const,
  integrationDeliveries: (integrationId: string) => ['integration-deliveries', integrationId] as const,
  invites: ['invites'] as const,
  registrations: ['registrations'] as const,
  people: ['people'] as const,
  workspace: ['workspace'] as const,
}

/** The JSON body an operation takes, from the SDK's types. */
type JsonBody<P extends keyof paths, M extends 'post' | 'patch'> = paths[P][M] extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never

/** A delivery history's page filter: older than `before`, of one status. */
const deliveryQuery = (before: string | undefined, status: DeliveryStatus | undefined) => ({ ...(before ? { before } : {}), ...(status ? { status } : {}) })

// Webhooks and integrations change state with their deliveries (failing, turned off): their lists are read again now and then.
const ENDPOINTS_REFRESH_MS = 15_000

// Agents
export const useAgents = () => useQuery({ queryKey: settingsKeys.agents, queryFn: () => unwrap(api.GET('/api/v1/agents')) })

export const fetchAgent = (id: string) => unwrap(api.GET('/api/v1/agents/{id}', { params: { path: { id } } }))
export type Agent = Awaited<ReturnType<typeof fetchAgent>>
export const useAgent = (id: string) => useQuery({ queryKey: settingsKeys.agent(id), queryFn: () => fetchAgent(id) })

export const createAgent = (body: JsonBody<'/api/v1/agents', 'post'>) => unwrap(api.POST('/api/v1/agents', { body }))
export const updateAgent = (id: string, body: JsonBody<'/api/v1/agents/{id}', 'patch'>) => unwrap(api.PATCH('/api/v1/agents/{id}', { params: { path: { id } }, body }))
export const deleteAgent = (id: string) => unwrap(api.DELETE('/api/v1/agents/{id}', { params: { path: { id } } }))

// An agent's API keys
export const useAgentKeys = (agentId: string) => useQuery({ queryKey: settingsKeys.keys(agentId), queryFn: () => unwrap(api.GET('/api/v1/agents/{id}/keys', { params: { path: { id: agentId } } })) })
export const createAgentKey = (agentId: string, name: string) => unwrap(api.POST('/api/v1/agents/{id}/keys', { params: { path: { id: agentId } }, body: { name } }))
export const revokeAgentKey = (agentId: string, keyId: string) => unwrap(api.DELETE('/api/v1/agents/{id}/keys/{key_id}', { params: { path: { id: agentId, key_id: keyId } } }))

// An agent's webhooks
export const fetchWebhooks = (agentId: string) => unwrap(api.GET('/api/v1/agents/{id}/webhooks', { params: { path: { id: agentId } } }))
export type Webhook = Awaited<ReturnType<typeof fetchWebhooks>>[number]
export const useWebhooks = (agentId: string) => useQuery({ queryKey: settingsKeys.webhooks(agentId), queryFn: () => fetchWebhooks(agentId), refetchInterval: ENDPOINTS_REFRESH_MS })

type WebhookPath = { id: string; webhook_id: string }
export const createWebhook = (agentId: string, body: JsonBody<'/api/v1/agents/{id}/webhooks', 'post'>) => unwrap(api.POST('/api/v1/agents/{id}/webhooks', { params: { path: { id: agentId } }, body }))
export const setWebhookActive = (path: WebhookPath, active: boolean) => unwrap(api.PATCH('/api/v1/agents/{id}/webhooks/{webhook_id}', { params: { path }, body: { active } }))
export const rotateWebhookSecret = (path: WebhookPath) => unwrap(api.POST('/api/v1/agents/{id}/webhooks/{webhook_id}/rotate-secret', { params: { path } }))
export const deleteWebhook = (path: WebhookPath) => unwrap(api.DELETE('/api/v1/agents/{id}/webhooks/{webhook_id}', { params: { path } }))
export const fetchWebhookDeliveries = (path: WebhookPath, before: string | undefined, status: DeliveryStatus | undefined) =>
  unwrap(api.GET('/api/v1/agents/{id}/webhooks/{webhook_id}/deliveries', { params: { path, query: deliveryQuery(before, status) } }))
export const redeliverWebhook = (path: WebhookPath, deliveryId: string) =>
  unwrap(api.POST('/api/v1/agents/{id}/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver', { params: { path: { ...path, delivery_id: deliveryId } } }))

// Integrations
export const fetchIntegrations = () => unwrap(api.GET('/api/v1/integrations'))
export type Integration = Awaited<ReturnType<typeof fetchIntegrations>>[number]
export const useIntegrations = () => useQuery({ queryKey: settingsKeys.integrations, queryFn: fetchIntegrations, refetchInterval: ENDPOINTS_REFRESH_MS })

export const createIntegration = (body: JsonBody<'/api/v1/integrations', 'post'>) => unwrap(api.POST('/api/v1/integrations', { body }))
export const updateIntegration = (id: string, body: JsonBody<'/api/v1/integrations/{id}', 'patch'>) => unwrap(api.PATCH('/api/v1/integrations/{id}', { params: { path: { id } }, body }))
export const rotateIntegrationKey = (id: string) => unwrap(api.POST('/api/v1/integrations/{id}/rotate-key', { params: { path: { id } } }))
export const rotateIntegrationSecret = (id: string) => unwrap(api.POST('/api/v1/integrations/{id}/rotate-secret', { params: { path: { id } } }))
export const deleteIntegration = (id: string) => unwrap(api.DELETE('/api/v1/integrations/{id}', { params: { path: { id } } }))
export const fetchIntegrationDeliveries = (id: string, before: string | undefined, status: DeliveryStatus | undefined) =>
  unwrap(api.GET('/api/v1/integrations/{id}/deliveries', { params: { path: { id }, query: deliveryQuery(before, status) } }))
export const redeliverIntegration = (id: string, deliveryId: string) =>
  unwrap(api.POST('/api/v1/integrations/{id}/deliveries/{delivery_id}/redeliver', { params: { path: { id, delivery_id: deliveryId } } }))

// People: invites, sign-ups awaiting approval, everyone
export const useInvites = () => useQuery({ queryKey: settingsKeys.invites, queryFn: () => unwrap(api.GET('/api/v1/invites')) })
export const createInvite = (body: JsonBody<'/api/v1/invites', 'post'>) => unwrap(api.POST('/api/v1/invites', { body }))

export const useRegistrations = () => useQuery({ queryKey: settingsKeys.registrations, queryFn: () => unwrap(api.GET('/api/v1/registrations')) })
export const approveRegistration = (id: string) => unwrap(api.POST('/api/v1/registrations/{id}/approve', { params: { path: { id } } }))
export const refuseRegistration = (id: string) => unwrap(api.DELETE('/api/v1/registrations/{id}', { params: { path: { id } } }))

export const usePeople = () => useQuery({ queryKey: settingsKeys.people, queryFn: () => unwrap(api.GET('/api/v1/users')) })

// The workspace
export const fetchWorkspace = () => unwrap(api.GET('/api/v1/workspace'))
export type Workspace = Awaited<ReturnType<typeof fetchWorkspace>>
export const useWorkspace = () => useQuery({ queryKey: settingsKeys.workspace, queryFn: fetchWorkspace })
export const updateWorkspace = (body: JsonBody<'/api/v1/workspace', 'patch'>) => unwrap(api.PATCH('/api/v1/workspace', { body }))
