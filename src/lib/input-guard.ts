// What no input may carry, whatever route or channel it arrives by: strings PostgreSQL cannot
// store (a NUL byte is refused by `text` columns, a lone UTF-16 surrogate is not valid UTF-8) and
// JSON nested so deep that serialising it (JSON.stringify, Prisma, the response) overflows the
// stack. One check, used by the HTTP hook (src/plugins/input-guard.ts: body, query, params), the
// multipart reader and the WebSocket gateway. It walks with an explicit stack, so the check itself
// cannot overflow whatever the nesting.
import { badRequest, type AppError } from './errors.ts'

/** Deepest nesting of objects and arrays accepted in any JSON input. */
export const MAX_INPUT_DEPTH = 32

// A NUL, or a high surrogate not followed by a low one, or a low one not preceded by a high one.
// eslint-disable-next-line no-control-regex -- NUL is what it looks for
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

/** The problem with a single string, or null. */
export function stringProblem(value: string): string | null {
  if (!UNSTORABLE.test(value)) return null
  return value.includes('\u0000') ? 'must not contain NUL (\\u0000) characters' : 'must be valid Unicode (no lone surrogate code units)'
}

const where = (path: string): string => (path ? `'${path}' ` : '')

/**
 * The first problem found in a parsed input (keys and values, at any depth), as a sentence
 * naming the field, or null when the value is fine.
 */
export function inputProblem(value: unknown, label = ''): string | null {
  const stack: Array<{ value: unknown; path: string; depth: number }> = [{ value, path: '', depth: 0 }]
  while (stack.length) {
    const item = stack.pop()!
    if (typeof item.value === 'string') {
      const problem = stringProblem(item.value)
      if (problem) return `${label}${where(item.path)}${problem}`.trim()
      continue
    }
    if (typeof item.value !== 'object' || item.value === null) continue
    if (item.depth >= MAX_INPUT_DEPTH) return `${label}${where(item.path)}is nested deeper than ${MAX_INPUT_DEPTH} levels`.trim()
    const entries = Array.isArray(item.value) ? item.value.entries() : Object.entries(item.value)
    for (const [key, child] of entries) {
      const name = String(key)
      const keyProblem = stringProblem(name)
      if (keyProblem) return `${label}${where(item.path)}has a property name that ${keyProblem}`.trim()
      stack.push({ value: child, path: item.path ? `${item.path}.${name}` : name, depth: item.depth + 1 })
    }
  }
  return null
}

/** Throws 400 VALIDATION_ERROR when `value` holds something no input may carry. */
export function assertStorable(value: unknown, label = ''): void {
  const problem = inputProblem(value, label)
  if (problem) throw invalidInput(problem)
}

const invalidInput = (problem: string): AppError => badRequest(`invalid input: ${problem}`)
