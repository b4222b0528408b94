// The arithmetic of attention, apart from the page (no DOM): what the tab's title says and how
// many messages are unread outside the conversation on screen.
import type { ChannelSummary, DmSummary } from '../channels/sidebar-state.ts'

export const TITLE = 'Agent Messaging'

/** Unread messages across the conversations, leaving out the one on screen. */
export function unreadTotal(channels: ChannelSummary[] | undefined, dms: DmSummary[] | undefined, activeId: string | null): number {
  let total = 0
  for (const c of channels ?? []) if (c.type === 'channel' && c.id !== activeId) total += c.unread_count
  for (const d of dms ?? []) if (d.id !== activeId) total += d.unread_count
  return total
}

/** "(3) Agent Messaging", "(3 · 1 @) …" with unseen mentions; the favicon gets a dot. */
export function attentionTitle(unread: number, mentions: number): string {
  if (!unread && !mentions) return TITLE
  return `(${unread > 99 ? '99+' : unread}${mentions ? ` · ${mentions} @` : ''}) ${TITLE}`
}
