// The shape of one entry of the event catalog (./catalog.ts) and the one mapping between the names
// an event goes by. An entry is the event's payload schema (what services emit, what webhooks
// carry) plus the documentation of each way it leaves the service:
// - `frame`: clients get it on the WebSocket and in GET /api/v1/events (envelope + payload);
// - `webhook`: agent webhooks may subscribe to it (envelope + the payload as it is);
// - `integration`: integrations may subscribe to it, with the spec's own payload built from it.
// `null` means the event does not leave that way. Everything else (frame schemas, webhook and
// integration bodies and their schemas, the OpenAPI `webhooks` section, the AsyncAPI document, the
// lists of subscribable events) is derived from these entries.
import type { Static, TObject } from 'typebox'

/** A channel event carries its channel's id; a workspace event (agent.connected) carries null. */
export type Scope = 'channel' | 'workspace'

/** Documentation of the client frame (WebSocket, event log). */
export interface FrameDoc {
  /** The frame schema's description: what happened, and who receives it when that is not obvious. */
  description: string
  /** One line, for the AsyncAPI message list. */
  summary: string
}

/** Documentation of the agent webhook delivery. */
export interface WebhookDoc {
  /** When the delivery is made, for the OpenAPI `webhooks` section. */
  when: string
}

/** What an integration payload is built from: the committed event. */
export interface EventInput<P> {
  channelId: string | null
  occurredAt: string
  payload: P
}

/** The integration delivery: its own payload schema (the spec's shape) and how it is built. */
export interface IntegrationDoc<P extends TObject = TObject, I extends TObject = TObject> {
  when: string
  payload: I
  // Method syntax on purpose: a catalog holds entries of different payload types.
  build(event: EventInput<Static<P>>): Static<I>
}

export interface EventSpec<
  P extends TObject = TObject,
  S extends Scope = Scope,
  F extends FrameDoc | null = FrameDoc | null,
  W extends WebhookDoc | null = WebhookDoc | null,
  I extends IntegrationDoc<P> | null = IntegrationDoc<P> | null,
> {
  scope: S
  payload: P
  frame: F
  webhook: W
  integration: I
}

/** Any catalog: the service's own (./catalog.ts), or one a test extends to check a derivation. */
export type EventCatalog = Record<string, EventSpec>

/**
 * Declares one event. Generic so the compiler keeps each part's exact type: the payload's static
 * type for `emit`, whether the event has a frame, a webhook or an integration delivery, and the
 * integration payload that `build` must return.
 */
export function defineEvent<P extends TObject, S extends Scope, F extends FrameDoc | null, W extends WebhookDoc | null, I extends TObject = never>(spec: {
  scope: S
  payload: P
  frame: F
  webhook: W
  integration: IntegrationDoc<P, I> | null
}): EventSpec<P, S, F, W, [I] extends [never] ? null : IntegrationDoc<P, I>> {
  return spec as EventSpec<P, S, F, W, [I] extends [never] ? null : IntegrationDoc<P, I>>
}

// ---- names ----

/**
 * Published names that do not follow the rule below: the specification names the frame of a new
 * message `new_message`. Published names are a contract (docs/decisions.md, "One event catalog").
 */
const FRAME_TYPE_EXCEPTIONS = { 'message.created': 'new_message' } as const

type Underscored<T extends string> = T extends `${infer A}.${infer B}` ? `${A}_${Underscored<B>}` : T

/** The frame type of an event type: `channel.created` → `channel_created` (and the exceptions). */
export type FrameTypeOf<T extends string> = T extends keyof typeof FRAME_TYPE_EXCEPTIONS ? (typeof FRAME_TYPE_EXCEPTIONS)[T] : Underscored<T>

/**
 * The one mapping between names: webhooks, integrations and the outbox use the event type
 * (`channel.created`); WebSocket frames and the REST event log use its frame type.
 */
export function frameTypeOf<T extends string>(type: T): FrameTypeOf<T> {
  const exception = (FRAME_TYPE_EXCEPTIONS as Record<string, string>)[type]
  return (exception ?? type.replaceAll('.', '_')) as FrameTypeOf<T>
}
