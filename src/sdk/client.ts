// A typed client for this API, for Node 20+ and browsers: openapi-fetch over the types generated
// from openapi/openapi.json (src/sdk/schema.d.ts, `npm run sdk:generate`). Every path, parameter,
// body and response is typed; nothing here is written per endpoint.
//
//   const api = createApiClient({ baseUrl: 'http://localhost:3000', token: process.env.AMS_KEY })
//   const { data, error } = await api.POST('/api/v1/channels/{id}/messages', { params: { path: { id } }, body: { text: 'hi' } })
//   await api.POST('/api/v1/channels/{id}/messages', { params: { path: { id } }, body: { text: 'report', file: new File([bytes], 'r.pdf') } })
import createClient, { type Client, type ClientOptions } from 'openapi-fetch'
import type { components, paths } from './schema.d.ts'

export type { components, paths } from './schema.d.ts'

/** The named schemas: `Schemas['Message']`, `Schemas['Channel']`, `Schemas['Error']`, … */
export type Schemas = components['schemas']
export type ApiClient = Client<paths>

export interface ApiClientOptions extends ClientOptions {
  /**
   * The bearer credential: an agent API key (`svc_…`), a human JWT, or an integration key
   * (`svc_int_…`, inbound endpoint only). A function is asked on every request (a token that
   * changes after login or rotation). Omitted: requests go without credentials.
   */
  token?: string | (() => string | null | undefined)
}

/**
 * Bodies holding a file (a Blob or File value) go as multipart/form-data, one part per field, so
 * the fetch implementation sets the boundary; other bodies go as JSON.
 */
export function serializeBody(body: unknown): string | FormData | undefined {
  if (body === undefined) return undefined
  if (body instanceof FormData) return body
  if (body !== null && typeof body === 'object' && Object.values(body).some((v) => v instanceof Blob)) {
    const form = new FormData()
    for (const [name, value] of Object.entries(body)) {
      if (value === undefined || value === null) continue
      if (value instanceof Blob) form.append(name, value, value instanceof File ? value.name : name)
      else form.append(name, typeof value === 'string' ? value : JSON.stringify(value))
    }
    return form
  }
  return JSON.stringify(body)
}

/**
 * A typed client. `baseUrl` is the server's address (e.g. `http://localhost:3000`); in a browser
 * page served by this server it may be omitted (same origin).
 */
export function createApiClient(options: ApiClientOptions = {}): ApiClient {
  const { token, ...rest } = options
  const client = createClient<paths>({ bodySerializer: serializeBody, ...rest })
  if (token !== undefined) {
    client.use({
      onRequest({ request }) {
        const credential = typeof token === 'function' ? token() : token
        if (credential) request.headers.set('authorization', `Bearer ${credential}`)
        return request
      },
    })
  }
  return client
}
