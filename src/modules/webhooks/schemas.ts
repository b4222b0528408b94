// Per-agent webhooks and the delivery records shared with integrations.
import { Type, type Static } from 'typebox'
import { Timestamp, Uuid } from '../../schemas/common.ts'
import { WEBHOOK_EVENTS } from '../../events/types.ts'
import { OnlyField } from '../../events/filter.ts'

export const TargetUrlField = Type.String({
  minLength: 1,
  maxLength: 2048,
  description:
    'Absolute http(s) URL. Loopback, private, link-local (169.254.0.0/16), CGNAT, unspecified and other reserved addresses are refused (400 `INVALID_URL`) here and again, on the resolved address, at every connection; an operator can allow them with `WEBHOOK_ALLOW_PRIVATE` / `WEBHOOK_ALLOW_HOSTS`. Redirects are not followed.',
})

export const WebhookEventField = Type.Enum([...WEBHOOK_EVENTS], {
  description: 'A channel event; the agent receives it for channels it belongs to. Payloads: the `webhooks` section of this document.',
})

export const WebhookEventsField = Type.Array(WebhookEventField, { minItems: 1, maxItems: WEBHOOK_EVENTS.length, uniqueItems: true })

const EndpointStatusFields = {
  active: Type.Boolean({ description: 'False when disabled (by the owner, or automatically after failing for a long time: see `disabled_reason`). A disabled endpoint gets no deliveries.' }),
  disabled_at: Type.Union([Timestamp, Type.Null()]),
  disabled_reason: Type.Union([Type.String(), Type.Null()], { description: 'Why it was disabled, e.g. the failure streak and the last error.' }),
  consecutive_failures: Type.Integer({ minimum: 0, description: 'Failed attempts since the last success.' }),
  failing_since: Type.Union([Timestamp, Type.Null()], { description: 'First failed attempt of the current failure streak; null when the last attempt succeeded.' }),
}

/** The filter vocabulary of every transport (docs/realtime.md, "Filters"), for webhooks and integrations. */
export const SubscriptionOnlyField = Type.Union([OnlyField, Type.Null()], {
  description:
    'Narrows the subscribed `events`: `addressed` delivers only the events addressed to the agent (a message in a DM with it, a message that mentions it, a reply in a thread it started or posted in, a reaction to its message: subscribe to `message.created`, `message.mentioned` and `reaction.added`); `mentions` only `message.mentioned`; null (the default) every subscribed event. Membership rules apply as always.',
})

const IncludeOwnMessagesField = Type.Boolean({
  description:
    'Whether `message.created` and `message.updated` deliveries include the agent\'s own messages: true (the default, the spec\'s "a new message in any channel the agent belongs to"), or false so that an agent does not hear itself, the first step against echo loops (docs/loops.md).',
})

export const WebhookSchema = Type.Object(
  {
    id: Uuid,
    agent_id: Uuid,
    url: Type.String(),
    events: Type.Array(Type.String()),
    include_own_messages: IncludeOwnMessagesField,
    only: SubscriptionOnlyField,
    ...EndpointStatusFields,
    created_at: Timestamp,
  },
  { additionalProperties: false },
)

export const CreatedWebhookSchema = Type.Object(
  {
    ...WebhookSchema.properties,
    secret: Type.String({
      description: 'Signing secret: the one given in the request, else generated (`whsec_` + 32 random bytes, base64). Shown only here (and on rotation); the HMAC key is this whole string, UTF-8.',
    }),
  },
  { additionalProperties: false },
)

export const WebhookListSchema = Type.Array(WebhookSchema)

/** A caller-chosen HMAC secret (webhooks: `secret`, integrations: `hmac_secret`). */
export const ChosenSecretField = Type.String({
  minLength: 16,
  maxLength: 256,
  description:
    'Optional: your own signing secret, 16 to 256 characters (the HMAC key is this whole string, UTF-8). Omit it to let the server generate one (`whsec_` + 32 random bytes, base64), which is better unless you need to reuse an existing secret. Shown back only in the creation response.',
})

export const CreateWebhookSchema = Type.Object(
  {
    url: TargetUrlField,
    events: WebhookEventsField,
    secret: Type.Optional(ChosenSecretField),
    include_own_messages: Type.Optional(IncludeOwnMessagesField),
    only: Type.Optional(SubscriptionOnlyField),
  },
  { additionalProperties: false },
)

export const UpdateWebhookSchema = Type.Object(
  {
    url: Type.Optional(TargetUrlField),
    events: Type.Optional(WebhookEventsField),
    include_own_messages: Type.Optional(IncludeOwnMessagesField),
    only: Type.Optional(SubscriptionOnlyField),
    active: Type.Optional(Type.Boolean({ description: 'true re-enables a disabled webhook (its failure streak is reset); false pauses it.' })),
  },
  { additionalProperties: false, minProperties: 1 },
)

export const RotatedSecretSchema = Type.Object(
  { id: Uuid, secret: Type.String({ description: 'The new signing secret, shown only here. The old one stops working at once.' }) },
  { additionalProperties: false },
)

export const WebhookParams = Type.Object({ id: Uuid, webhook_id: Uuid }, { additionalProperties: false })
export const WebhookDeliveryParams = Type.Object({ id: Uuid, webhook_id: Uuid, delivery_id: Uuid }, { additionalProperties: false })

export const DeliveryStatusField = Type.Union([Type.Literal('pending'), Type.Literal('succeeded'), Type.Literal('failed')], {
  description: '`pending` (queued, in flight or waiting for a retry), `succeeded` (a 2xx within the timeout) or `failed` (every attempt failed, or the endpoint was disabled).',
})

export const DeliverySchema = Type.Object(
  {
    id: Type.String({ format: 'uuid', description: 'Delivery id: the same on every attempt (header `X-Webhook-Delivery-ID` / `X-Service-Delivery-ID`).' }),
    event_id: Type.String({ format: 'uuid', description: 'The domain event delivered.' }),
    event_type: Type.String(),
    status: DeliveryStatusField,
    attempts: Type.Integer({ minimum: 0 }),
    last_status_code: Type.Union([Type.Integer(), Type.Null()], { description: 'HTTP status of the last attempt; null if none or no response.' }),
    last_error: Type.Union([Type.String(), Type.Null()], { description: 'What went wrong on the last attempt (status and the start of the response body, or the network error).' }),
    last_duration_ms: Type.Union([Type.Integer(), Type.Null()]),
    next_attempt_at: Type.Union([Timestamp, Type.Null()], { description: 'When a pending delivery is (re)tried; null once completed.' }),
    created_at: Timestamp,
    updated_at: Timestamp,
    completed_at: Type.Union([Timestamp, Type.Null()]),
  },
  { additionalProperties: false },
)

export const DeliveryPageSchema = Type.Object(
  {
    deliveries: Type.Array(DeliverySchema, { description: 'Newest first.' }),
    has_more: Type.Boolean({ description: 'Older deliveries exist beyond this page.' }),
    next_before: Type.Union([Uuid, Type.Null()], { description: 'Pass as `before` for the next (older) page; null when the page is empty.' }),
  },
  { additionalProperties: false },
)

export const DELIVERY_PAGE_DEFAULT = 50

export const DeliveryListQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: DELIVERY_PAGE_DEFAULT, description: '1 to 100 (default 50).' })),
    before: Type.Optional(Type.String({ format: 'uuid', description: 'Only deliveries older than this delivery id.' })),
    status: Type.Optional(DeliveryStatusField),
  },
  { additionalProperties: false },
)

export type WebhookDto = Static<typeof WebhookSchema>
export type CreatedWebhook = Static<typeof CreatedWebhookSchema>
export type CreateWebhookInput = Static<typeof CreateWebhookSchema>
export type UpdateWebhookInput = Static<typeof UpdateWebhookSchema>
export type DeliveryDto = Static<typeof DeliverySchema>
export type DeliveryPage = Static<typeof DeliveryPageSchema>
// `limit` is optional to callers; the validator fills in the default, so the service always has it.
export type DeliveryListQueryInput = Static<typeof DeliveryListQuery> & { limit: number }
