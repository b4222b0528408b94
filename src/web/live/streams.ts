// Streaming messages in the web UI (issue 25): a stream's status and Stop, kept per message in the
// query cache (['stream', id]), and the text of a delta applied to the text held.
import type { QueryClient } from '@tanstack/react-query'

export interface StreamStatus {
  title: string
  steps: { title: string; state: 'pending' | 'in_progress' | 'complete' | 'error' }[]
}
export interface StreamView {
  status: StreamStatus | null
  stopRequested: boolean
}

export const streamKey = (messageId: string) => ['stream', messageId] as const

/** The text after a delta: its text replaces from `offset` on; null when a frame was missed (read the message again). */
export function withDelta(text: string, delta: { offset: number; text: string }): string | null {
  if (delta.offset > text.length) return null
  return text.slice(0, delta.offset) + delta.text
}

export function setStreamView(queryClient: QueryClient, messageId: string, change: (view: StreamView) => StreamView): void {
  queryClient.setQueryData<StreamView>(streamKey(messageId), (view) => change(view ?? { status: null, stopRequested: false }))
}
