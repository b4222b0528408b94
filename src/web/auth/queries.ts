// Signing in and up: the workspace's sign-up mode, readable without an account (GET
// /api/v1/auth/registration), so the login page offers sign-up only where it exists and the
// sign-up page says what will happen; and the calls that make and open a session.
import { useQuery } from '@tanstack/react-query'
import { api, unwrap } from '../api/client.ts'

export const authKeys = {
  registration: ['registration'] as const,
}

export function useRegistration() {
  return useQuery({ queryKey: authKeys.registration, queryFn: () => unwrap(api.GET('/api/v1/auth/registration')), staleTime: 60_000 })
}

export const passwordLogin = (email: string, password: string) => unwrap(api.POST('/api/v1/auth/login', { body: { email, password } }))

/** Makes the account, then signs it in: the answer is the session. */
export async function signUp(account: { email: string; password: string; display_name: string }) {
  await unwrap(api.POST('/api/v1/auth/register', { body: account }))
  return passwordLogin(account.email, account.password)
}
