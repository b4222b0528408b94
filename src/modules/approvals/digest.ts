// The digest that binds a decision to what was shown: SHA-256 of the canonical JSON of
// {action, arguments} (object keys sorted at every level, no spaces), so that the same request
// has the same digest whatever order its keys were sent or stored in (jsonb reorders them).
import { createHash } from 'node:crypto'

export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value)
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  const obj = value as Record<string, unknown>
  const keys = Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort()
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(',')}}`
}

export function approvalDigest(action: string, args: unknown): string {
  return createHash('sha256')
    .update(canonicalJson({ action, arguments: args }))
    .digest('hex')
}
