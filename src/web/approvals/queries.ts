// "Needs your decision": the pending approval requests the signed-in person may decide
// (GET /api/v1/approvals/pending), refreshed by the approval_* and new_message frames.
import { useQuery } from '@tanstack/react-query'
import { api, unwrap } from '../api/client.ts'

export const approvalKeys = {
  all: ['approvals'] as const,
  pending: ['approvals', 'pending'] as const,
}

export function usePendingApprovals() {
  return useQuery({
    queryKey: approvalKeys.pending,
    queryFn: () => unwrap(api.GET('/api/v1/approvals/pending', { params: { query: { limit: 100 } } })),
  })
}
