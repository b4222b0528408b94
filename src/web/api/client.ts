// The UI's only way to the API: the project's SDK (src/sdk/client.ts, openapi-fetch over the
// types generated from openapi/openapi.json), so the UI compiles only against the published
// contract and proves the SDK agents use. Every call carries the session's JWT; a 401 on an
// authenticated call ends the session, which sends the person back to the login page.
import { createApiClient } from '../../sdk/client.ts'
import { ApiError } from './errors.ts'
import { getSession, signOut } from './session.ts'

export const api = createApiClient({ baseUrl: '', token: () => getSession()?.token })
api.use({
  onResponse({ request, response }) {
    if (response.status === 401 && request.headers.has('authorization')) signOut('expired')
    return response
  },
})

interface Result<T> {
  data?: T
  error?: unknown
  response: Response
}

/** The data of a successful call, or an ApiError carrying the `{error, code}` the server sent. */
export async function unwrap<T>(call: Promise<Result<T>>): Promise<T> {
  let result: Result<T>
  try {
    result = await call
  } catch {
    throw new ApiError(0, 'NETWORK', 'network error')
  }
  if (result.response.ok) return result.data as T
  const body = (result.error ?? {}) as { code?: unknown; error?: unknown }
  throw new ApiError(result.response.status, typeof body.code === 'string' ? body.code : 'HTTP_' + result.response.status, typeof body.error === 'string' ? body.error : result.response.statusText)
}
