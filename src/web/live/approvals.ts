// Approval requests in the cached message pages (docs/approvals.md): set by the person's own
// decision and by the socket's approval_decided / approval_expired / approval_cancelled frames,
// so that every open card shows the outcome in place of its buttons.
import type { QueryClient } from '@tanstack/react-query'
import { approvalKeys } from '../approvals/queries.ts'
import { messageKeys, threadKeys, type MessageWindow } from '../messages/queries.ts'
import type { Message } from '../messages/types.ts'

type Approval = NonNullable<Message['approval']>

export function setApproval(queryClient: QueryClient, approval: Approval): void {
  queryClient.setQueriesData<MessageWindow>({ queryKey: messageKeys.channel(approval.channel_id) }, (data) => {
    if (!data) return data
    return {
      ...data,
      pages: data.pages.map((page) => ({ ...page, messages: page.messages.map((m) => (m.id === approval.message_id ? { ...m, approval } : m)) })),
    }
  })
  // A request in a thread, or a thread's root, is read by the thread panel's own queries.
  void queryClient.invalidateQueries({ queryKey: threadKeys.channel(approval.channel_id) })
  void queryClient.invalidateQueries({ queryKey: messageKeys.one(approval.channel_id, approval.message_id) })
  void queryClient.invalidateQueries({ queryKey: approvalKeys.pending })
}
