// Streaming messages in the web UI (issue 25): a stream's status and Stop, kept per message in the
// query cache (messageKeys.stream), and the text of a delta applied to the text held.
import type { QueryClient } from '@tanstack/react-query'
import type { MessageStatusFrame, ThreadStatusFrame } from '../../sdk/frames.ts'
import { messageKeys, threadKeys } from '../messages/queries.ts'

export type StreamStatus = NonNullable<MessageStatusFrame['status']>
export interface StreamView {
  status: StreamStatus | null
  stopRequested: boolean
}

/** The text after a delta: its text replaces from `offset` on; null when a frame was missed (read the message again). */
export function withDelta(text: string, delta: { offset: number; text: string }): string | null {
  if (delta.offset > text.length) return null
  return text.slice(0, delta.offset) + delta.text
}

export function setStreamView(queryClient: QueryClient, messageId: string, change: (view: StreamView) => StreamView): void {
  queryClient.setQueryData<StreamView>(messageKeys.stream(messageId), (view) => change(view ?? { status: null, stopRequested: false }))
}

// A status on a thread without a stream: each agent's, per thread root (threadKeys.status).
export interface ThreadStatusEntry {
  agent_id: string
  agent_name: string
  status: StreamStatus
}

/** A `thread_status` frame: the agent's status replaces its earlier one, or leaves (null). */
export function applyThreadStatus(queryClient: QueryClient, frame: ThreadStatusFrame): void {
  queryClient.setQueryData<ThreadStatusEntry[]>(threadKeys.status(frame.channel_id, frame.thread_id), (entries = []) => {
    const others = entries.filter((e) => e.agent_id !== frame.agent_id)
    return frame.status ? [...others, { agent_id: frame.agent_id, agent_name: frame.agent_name, status: frame.status }] : others
  })
}
