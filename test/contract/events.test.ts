// The event contract has one owner, the catalog (src/events/catalog.ts): the WebSocket frame
// schemas, the webhook and integration body schemas, the OpenAPI `webhooks` section and the
// AsyncAPI document are all derived from it. A field added to an entry, or a new entry, shows up in
// every one of them; the published documents are exactly what the derivation gives for the
// service's catalog; and what the service sends matches the derived schemas.
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { Type } from 'typebox'
import { Compile } from 'typebox/compile'
import YAML from 'yaml'
import { newEvent } from '../../src/events/bus.ts'
import { EVENTS } from '../../src/events/catalog.ts'
import { defineEvent, frameTypeOf, type EventCatalog } from '../../src/events/define.ts'
import { deliveryWebhooksDocument, integrationBodySchema, webhookBodySchema } from '../../src/events/openapi.ts'
import { CLIENT_EVENTS, DOMAIN_EVENT_TYPES, INTEGRATION_EVENTS, WEBHOOK_EVENTS, type DomainEvent, type EventPayload } from '../../src/events/types.ts'
import { uuidv7 } from '../../src/lib/ids.ts'
import { collapseEnums } from '../../src/plugins/openapi-shapes.ts'
import { asyncApiDocument } from '../../src/realtime/asyncapi.ts'
import { eventFrameSchemas, SERVER_FRAMES, toEventFrame } from '../../src/realtime/frames.ts'
import { Uuid } from '../../src/schemas/common.ts'
import { integrationBody, webhookBody } from '../../src/workers/payloads.ts'
import { messageDto } from '../support/index.ts'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const openapi = JSON.parse(await readFile(path.join(root, 'openapi/openapi.json'), 'utf8')) as {
  webhooks: unknown
  components: { schemas: Record<string, { title?: string; anyOf?: { $ref: string }[] }> }
}
const asyncapi = YAML.parse(await readFile(path.join(root, 'openapi/asyncapi.yaml'), 'utf8')) as unknown

type Json = Record<string, any>
const plain = (value: unknown): Json => JSON.parse(JSON.stringify(value)) as Json

/** The service's catalog with one field added to member.joined and one new event. */
const extended: EventCatalog = {
  ...EVENTS,
  'member.joined': { ...EVENTS['member.joined'], payload: Type.Object({ ...EVENTS['member.joined'].payload.properties, probe_field: Type.String() }) },
  'probe.pinged': defineEvent({
    scope: 'channel',
    payload: Type.Object({ channel_id: Uuid, probe_note: Type.String() }),
    frame: { description: 'A probe event of this test.', summary: 'Probe' },
    webhook: { when: 'A probe, for agents.' },
    integration: {
      when: 'A probe, for integrations.',
      payload: Type.Object({ note: Type.String() }),
      build: ({ payload }) => ({ note: payload.probe_note }),
    },
  }),
}

t.test('a field added to an event appears in its frame, webhook body, OpenAPI webhook and AsyncAPI message', async (t) => {
  const frame = plain(eventFrameSchemas(extended).member_joined)
  t.same(frame.properties.probe_field, { type: 'string' }, 'WebSocket / event log frame')
  t.ok(frame.required.includes('probe_field'))

  t.same(plain(webhookBodySchema('member.joined', extended['member.joined']!.payload)).properties.payload.properties.probe_field, { type: 'string' }, 'webhook body schema')

  const webhooks = plain(deliveryWebhooksDocument(extended))
  t.same(webhooks['agent-webhook.member.joined'].post.requestBody.content['application/json'].schema.properties.payload.properties.probe_field, { type: 'string' }, 'OpenAPI webhooks section')

  const doc = plain(asyncApiDocument(extended))
  t.same(doc.components.messages.member_joined.payload.properties.probe_field, { type: 'string' }, 'AsyncAPI document')

  // The service's own documents do not have it.
  t.notOk(plain(asyncApiDocument()).components.messages.member_joined.payload.properties.probe_field)
})

t.test('a new event gets its frame, both deliveries and its place in both documents', async (t) => {
  const frame = plain(eventFrameSchemas(extended).probe_pinged)
  t.equal(frame.properties.type.const, 'probe_pinged', 'the frame type follows the documented mapping')
  t.same(frame.properties.probe_note, { type: 'string' })
  t.same(Object.keys(frame.properties), ['type', 'event_id', 'cursor', 'occurred_at', 'channel_id', 'probe_note'], 'the envelope, then the payload fields (its channel_id is the envelope’s)')

  const webhooks = plain(deliveryWebhooksDocument(extended))
  const agent = webhooks['agent-webhook.probe.pinged'].post
  t.equal(agent.requestBody.content['application/json'].schema.properties.event_type.const, 'probe.pinged')
  t.same(agent.requestBody.content['application/json'].schema.properties.payload.properties.probe_note, { type: 'string' })
  t.match(agent.description, /A probe, for agents\./)
  const integration = webhooks['integration.probe.pinged'].post
  t.same(integration.requestBody.content['application/json'].schema.properties.payload.properties.note, { type: 'string' })
  t.match(integration.description, /A probe, for integrations\./)

  const doc = plain(asyncApiDocument(extended))
  t.equal(doc.components.messages.probe_pinged.summary, 'Probe')
  t.same(doc.components.messages.probe_pinged.payload.properties.probe_note, { type: 'string' })
  t.ok(
    doc.operations.receiveEvents.messages.some((m: { $ref: string }) => m.$ref.endsWith('/probe_pinged')),
    'a frame the server sends',
  )
})

/**
 * A published schema with its `$ref`s replaced by the components, and the derivation after the
 * document's own pass (src/plugins/openapi-shapes.ts), both without titles and descriptions (a
 * shared component carries its own): what is left is the structure, which must be the same.
 */
function structure(value: unknown, components: Record<string, unknown> = {}): unknown {
  if (Array.isArray(value)) return value.map((v) => structure(v, components))
  if (value === null || typeof value !== 'object') return value
  const ref = (value as { $ref?: unknown }).$ref
  if (typeof ref === 'string') return structure(components[ref.replace('#/components/schemas/', '')], components)
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => key !== 'title' && key !== 'description')
      .map(([key, v]) => [key, key === 'examples' ? v : structure(v, components)]),
  )
}

t.test('the published documents are what the derivation gives for the service catalog', async (t) => {
  const derived = plain(deliveryWebhooksDocument())
  collapseEnums(derived)
  t.same(structure(openapi.webhooks, openapi.components.schemas), structure(derived), 'openapi.json `webhooks`, its objects named')
  t.same(asyncapi, plain(asyncApiDocument()), 'asyncapi.yaml')
  t.same(
    openapi.components.schemas.Event?.anyOf?.map((frame) => openapi.components.schemas[frame.$ref.replace('#/components/schemas/', '')]?.title),
    CLIENT_EVENTS.map((type) => frameTypeOf(type)),
    'the Event component (GET /api/v1/events) lists the frames of the catalog',
  )
})

t.test('one list of event types, and one documented mapping of names', async (t) => {
  t.same(DOMAIN_EVENT_TYPES, Object.keys(EVENTS))
  t.same(WEBHOOK_EVENTS, [
    'message.created',
    'message.updated',
    'message.deleted',
    'message.mentioned',
    'message.stream_started',
    'message.stop_requested',
    'channel.created',
    'channel.updated',
    'channel.deleted',
    'member.joined',
    'member.left',
    'reaction.added',
    'reaction.removed',
    'approval.decided',
    'approval.expired',
    'approval.cancelled',
  ])
  t.same(INTEGRATION_EVENTS, [
    'message.created',
    'message.mentioned',
    'channel.created',
    'member.joined',
    'reaction.added',
    'reaction.removed',
    'approval.decided',
    'approval.expired',
    'approval.cancelled',
    'agent.connected',
  ])
  // Published names: the frame of message.created is the spec's `new_message`; every other frame
  // type is the event type with `_` for `.` (docs/decisions.md, "One event catalog").
  t.same(Object.fromEntries(CLIENT_EVENTS.map((type) => [type, frameTypeOf(type)])), {
    'message.created': 'new_message',
    'message.updated': 'message_updated',
    'message.deleted': 'message_deleted',
    'message.mentioned': 'message_mentioned',
    'channel.created': 'channel_created',
    'channel.updated': 'channel_updated',
    'channel.deleted': 'channel_deleted',
    'member.joined': 'member_joined',
    'member.left': 'member_left',
    'reaction.added': 'reaction_added',
    'reaction.removed': 'reaction_removed',
    'approval.decided': 'approval_decided',
    'approval.expired': 'approval_expired',
    'approval.cancelled': 'approval_cancelled',
    'message.stream_started': 'message_stream_started',
    'message.stream_finished': 'message_stream_finished',
    'message.stop_requested': 'message_stop_requested',
  })
})

// One well-formed payload per event (checked against the catalog by the compiler).
const channelId = uuidv7()
const actorId = uuidv7()
const at = new Date().toISOString()
const message = messageDto({ id: uuidv7(), channel_id: channelId, author_id: actorId, author_name: 'Ada', text: 'hello', created_at: at })
const channel = { id: channelId, name: 'general', description: '', topic: null, type: 'channel' as const, created_at: at }
const approval: EventPayload<'approval.decided'>['approval'] = {
  message_id: message.id,
  channel_id: channelId,
  requester_id: actorId,
  action: 'deploy',
  arguments: { env: 'prod' },
  summary: 'Deploy?',
  choices: ['approve', 'deny'],
  approvers: 'members',
  expires_at: at,
  on_expiry: 'deny',
  digest: 'a'.repeat(64),
  status: 'approved',
  decision: 'approve',
  decided_by: actorId,
  decided_by_name: 'Ada',
  decided_at: at,
  comment: null,
  final_arguments: { env: 'prod' },
}
const samples: { [T in keyof typeof EVENTS]: EventPayload<T> } = {
  'message.created': { message },
  'message.updated': { message: { ...message, edited_at: at } },
  'message.deleted': { message_id: message.id, channel_id: channelId, thread_id: null },
  'message.mentioned': { message: { ...message, mentions: [actorId] }, mentioned_ids: [actorId], mentioned_agent_ids: [actorId] },
  'channel.created': { channel, creator_id: actorId, creator_type: 'HUMAN' },
  'channel.updated': { channel: { ...channel, topic: 'news' } },
  'channel.deleted': { channel_id: channelId },
  'member.joined': { channel_id: channelId, member_id: actorId, member_type: 'AGENT', member_name: 'Ada', channel },
  'member.left': { channel_id: channelId, member_id: actorId, member_type: 'AGENT' },
  'reaction.added': { channel_id: channelId, message_id: message.id, emoji: '👀', member_id: actorId, member_type: 'AGENT', member_name: 'Ada', count: 1 },
  'reaction.removed': { channel_id: channelId, message_id: message.id, emoji: '👀', member_id: actorId, member_type: 'AGENT', member_name: 'Ada', count: 0 },
  'approval.decided': { approval },
  'approval.expired': { approval: { ...approval, status: 'expired', decision: 'deny', decided_by: null, decided_by_name: null, final_arguments: null } },
  'approval.cancelled': { approval: { ...approval, status: 'cancelled', decision: null, final_arguments: null } },
  'agent.connected': { agent_id: actorId, agent_name: 'ada', connected_at: at },
  'message.stream_started': { message: { ...message, stream_state: 'streaming' } },
  'message.stream_finished': { message: { ...message, stream_state: 'cancelled' } },
  'message.stop_requested': { message_id: message.id, channel_id: channelId, thread_id: null, author_id: actorId, requested_by_id: actorId, requested_by_name: 'Ada' },
}
const sampleEvents = DOMAIN_EVENT_TYPES.map((type): DomainEvent => newEvent(type, (EVENTS[type].scope === 'channel' ? channelId : null) as never, samples[type] as never))

t.test('what the service sends matches the derived schemas', async (t) => {
  for (const event of sampleEvents) {
    const spec = EVENTS[event.type]
    if (spec.frame) {
      const frame = toEventFrame({ cursor: '1764000000000-0', event })
      const check = Compile(SERVER_FRAMES[frameTypeOf(event.type)]!)
      t.ok(check.Check(frame), `${event.type}: frame ${JSON.stringify(check.Errors(frame)[0] ?? null)}`)
    }
    if (spec.webhook) {
      const body = JSON.parse(webhookBody(uuidv7(), actorId, event)) as unknown
      const check = Compile(webhookBodySchema(event.type, spec.payload))
      t.ok(check.Check(body), `${event.type}: webhook body ${JSON.stringify(check.Errors(body)[0] ?? null)}`)
    }
    if (spec.integration) {
      const body = JSON.parse(integrationBody(uuidv7(), event)!) as unknown
      const check = Compile(integrationBodySchema(event.type, spec.integration.payload))
      t.ok(check.Check(body), `${event.type}: integration body ${JSON.stringify(check.Errors(body)[0] ?? null)}`)
    } else {
      t.equal(integrationBody(uuidv7(), event), null, `${event.type}: no integration delivery`)
    }
  }
})

t.test('emitting is typed over the catalog', async (t) => {
  // Checked by `npm run typecheck`: each line below fails to compile without its directive.
  // @ts-expect-error a payload field of another event
  newEvent('member.joined', channelId, { channel_id: channelId, member_id: actorId, member_type: 'AGENT', agent_name: 'x' })
  // @ts-expect-error a channel event needs its channel
  newEvent('channel.deleted', null, { channel_id: channelId })
  // @ts-expect-error a workspace event has none
  newEvent('agent.connected', channelId, samples['agent.connected'])
  // @ts-expect-error an event type that is not in the catalog
  newEvent('message.pinned', channelId, {})
  t.pass()
})
