// Reactions in the cached message pages: set by the caller's own toggles and by the socket's
// reaction_added / reaction_removed frames (which carry the new count and who reacted).
import type { QueryClient } from '@tanstack/react-query'
import type { ReactionAddedFrame, ReactionRemovedFrame } from '../../sdk/frames.ts'
import { messageKeys, type MessageWindow } from '../messages/queries.ts'
import type { Message } from '../messages/types.ts'

type Reaction = Message['reactions'][number]

export function setReactions(queryClient: QueryClient, channelId: string, messageId: string, change: (reactions: Reaction[]) => Reaction[]): void {
  queryClient.setQueriesData<MessageWindow>({ queryKey: messageKeys.channel(channelId) }, (data) => {
    if (!data) return data
    return {
      ...data,
      pages: data.pages.map((page) => ({
        ...page,
        messages: page.messages.map((m) => (m.id === messageId ? { ...m, reactions: change(m.reactions ?? []) } : m)),
      })),
    }
  })
}

/** A reaction frame: the emoji's count as the server has it now; `reacted` changes only for our own. */
export function applyReactionEvent(queryClient: QueryClient, event: ReactionAddedFrame | ReactionRemovedFrame, me: string): void {
  const added = event.type === 'reaction_added'
  setReactions(queryClient, event.channel_id, event.message_id, (list) => {
    const found = list.find((r) => r.emoji === event.emoji)
    const reacted = event.member_id === me ? added : (found?.reacted ?? false)
    if (event.count === 0) return list.filter((r) => r.emoji !== event.emoji)
    if (!found) return [...list, { emoji: event.emoji, count: event.count, reacted }]
    return list.map((r) => (r.emoji === event.emoji ? { ...r, count: event.count, reacted } : r))
  })
}
