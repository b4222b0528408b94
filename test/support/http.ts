// The request side of the test kit: the injected-request function every helper takes and the
// bearer header every request sends (an agent API key or a human JWT, exactly as clients do).
import type { InjectOptions, LightMyRequestResponse } from 'fastify'

/** `app.inject`, or build(t)'s OpenAPI-validating wrapper of it (test/helper.ts). */
export type Api = (opts: InjectOptions) => Promise<LightMyRequestResponse>

/** The `authorization` header for an agent key (`svc_…`), an integration key or a human JWT. */
export const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` })

/** The body of an answer that must have `status`; anything else throws with what the server said. */
export function expectStatus<T>(res: LightMyRequestResponse, status: number, what: string): T {
  if (res.statusCode !== status) throw new Error(`${what}: ${res.statusCode} ${res.body}`)
  return res.json<T>()
}
