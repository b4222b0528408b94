// Secrets handed to clients (API keys, integration keys, invite tokens, signing secrets).
// Only their SHA-256 is stored; lookups go by hash and the final comparison is constant-time.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'

export const API_KEY_PREFIX = 'svc_'
export const INTEGRATION_KEY_PREFIX = 'svc_int_'
export const INVITE_TOKEN_PREFIX = 'inv_'
export const WEBHOOK_SECRET_PREFIX = 'whsec_'

/** prefix + 32 random bytes, base64 (256 bits of entropy). */
export function newSecret(prefix: string): string {
  return prefix + randomBytes(32).toString('base64')
}

export function sha256Hex(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex')
}

export function hmacSha256Hex(secret: string, body: string | Buffer): string {
  return createHmac('sha256', secret).update(body).digest('hex')
}

/** Constant-time equality of two strings (false, without early exit, when lengths differ). */
export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8')
  const right = Buffer.from(b, 'utf8')
  if (left.length !== right.length) {
    timingSafeEqual(left, left)
    return false
  }
  return timingSafeEqual(left, right)
}

/** "svc_AbCd…wxyz": enough to recognise a key, never enough to use it. */
export function maskSecret(secret: string, prefix: string): string {
  const body = secret.slice(prefix.length)
  return `${prefix}${body.slice(0, 4)}…${body.slice(-4)}`
}
