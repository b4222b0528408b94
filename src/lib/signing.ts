// Signatures of outbound deliveries (docs/webhooks.md). Both kinds carry
//   sha256=<hex HMAC-SHA256 of the raw body>                 (the spec's header)
// and, for replay protection, a second signature over "<timestamp>.<raw body>" where the
// timestamp (Unix seconds of this attempt) travels in its own header. The key is the secret
// string exactly as it was shown at creation (UTF-8, `whsec_` prefix included).
import { hmacSha256Hex } from './tokens.ts'

export const SIGNATURE_SCHEME = 'sha256='

/** `sha256=<hex HMAC-SHA256(secret, body)>`. */
export function signBody(secret: string, body: string): string {
  return SIGNATURE_SCHEME + hmacSha256Hex(secret, body)
}

/** `sha256=<hex HMAC-SHA256(secret, "<timestamp>.<body>")>`. */
export function signTimestamped(secret: string, timestamp: number, body: string): string {
  return SIGNATURE_SCHEME + hmacSha256Hex(secret, `${timestamp}.${body}`)
}

export interface DeliveryHeaderInput {
  kind: 'webhook' | 'integration'
  secret: string
  body: string
  deliveryId: string
  eventId: string
  eventType: string
  /** Webhook id or integration id. */
  targetId: string
  attempt: number
  /** Unix seconds. */
  timestamp: number
}

export const USER_AGENT = 'agent-messaging-service-webhooks/1.0'

/** The headers of one delivery attempt (besides Content-Length). */
export function deliveryHeaders(d: DeliveryHeaderInput): Record<string, string> {
  const common = { 'content-type': 'application/json', 'user-agent': USER_AGENT }
  if (d.kind === 'integration') {
    return {
      ...common,
      'x-service-event': d.eventType,
      'x-service-integration-id': d.targetId,
      'x-service-signature': signBody(d.secret, d.body),
      'x-service-delivery-id': d.deliveryId,
      'x-service-event-id': d.eventId,
      'x-service-attempt': String(d.attempt),
      'x-service-timestamp': String(d.timestamp),
      'x-service-timestamp-signature': signTimestamped(d.secret, d.timestamp, d.body),
    }
  }
  return {
    ...common,
    'x-webhook-event': d.eventType,
    'x-webhook-id': d.targetId,
    'x-webhook-signature': signBody(d.secret, d.body),
    'x-webhook-delivery-id': d.deliveryId,
    'x-webhook-event-id': d.eventId,
    'x-webhook-attempt': String(d.attempt),
    'x-webhook-timestamp': String(d.timestamp),
    'x-webhook-timestamp-signature': signTimestamped(d.secret, d.timestamp, d.body),
  }
}
