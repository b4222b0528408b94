// The workspace's sign-up mode, readable without an account (GET /api/v1/auth/registration), so
// the login page offers sign-up only where it exists and the sign-up page says what will happen.
import { useQuery } from '@tanstack/react-query'
import { api, unwrap } from '../api/client.ts'

export function useRegistration() {
  return useQuery({ queryKey: ['registration'], queryFn: () => unwrap(api.GET('/api/v1/auth/registration')), staleTime: 60_000 })
}
