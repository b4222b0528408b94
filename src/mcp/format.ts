// Compact renderings for a model to read, and the bounds that keep every answer small: a message
// text longer than MAX_MESSAGE_CHARS is cut in what MCP returns (the message itself is intact), and
// a page stops growing once its texts pass PAGE_BUDGET_CHARS, handing back a cursor instead.
import type { ApprovalDto } from '../schemas/approval.ts'
import type { MessageDto } from '../schemas/message.ts'
import type { EventFrame } from '../realtime/frames.ts'

/** Longest message text an MCP answer carries; the rest is marked as cut. */
export const MAX_MESSAGE_CHARS = 8_000
/** A page of messages or events stops once its texts add up to this many characters. */
export const PAGE_BUDGET_CHARS = 48_000

export interface McpMessage extends MessageDto {
  /** Present (true) when `text` was cut to MAX_MESSAGE_CHARS in this answer. */
  text_truncated?: true
}

/** The message with its text cut to MAX_MESSAGE_CHARS (marked), for MCP answers. */
export function bounded(message: MessageDto): McpMessage {
  if (message.text.length <= MAX_MESSAGE_CHARS) return message
  return { ...message, text: `${message.text.slice(0, MAX_MESSAGE_CHARS)}… [cut: ${message.text.length - MAX_MESSAGE_CHARS} more characters]`, text_truncated: true }
}

/** How many of `items` (in the order given) fit the page budget; always at least one. */
export function fitting<T>(items: T[], size: (item: T) => number): number {
  let used = 0
  for (let i = 0; i < items.length; i++) {
    used += size(items[i]!)
    if (used > PAGE_BUDGET_CHARS && i > 0) return i
  }
  return items.length
}

const when = (iso: string): string => iso.replace(/\.\d{3}Z$/, 'Z')

function kib(bytes: number): string {
  return bytes < 1024 ? `${bytes} B` : bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KiB` : `${(bytes / 1024 / 1024).toFixed(1)} MiB`
}

/** One line per message: time, author, type, id, text (and its file). */
export function messageLine(m: McpMessage): string {
  const file = m.attachment ? ` [file: ${m.attachment.file_name}, ${m.attachment.content_type}, ${kib(m.attachment.size)}]` : ''
  const edited = m.edited_at ? ' (edited)' : ''
  const stream = m.stream_state !== 'complete' ? ` (${m.stream_state})` : ''
  const thread = m.thread_id ? ` in thread ${m.thread_id}` : m.reply_count ? ` [${m.reply_count} repl${m.reply_count === 1 ? 'y' : 'ies'}: read_thread]` : ''
  return `[${when(m.created_at)}] ${m.author_name} (${m.author_type}, ${m.author_id}) msg ${m.id}${thread}${edited}${stream}: ${m.text}${file}`
}

/** An approval's state in one line: the outcome and what to run the action with (docs/approvals.md). */
export function approvalLine(a: ApprovalDto): string {
  const by = a.decided_by_name ? ` by ${a.decided_by_name}` : ''
  const decision = a.decision ? ` (${a.decision})` : ''
  const args = a.final_arguments ? `; run with ${JSON.stringify(a.final_arguments)}` : ''
  const comment = a.comment ? `; comment: ${a.comment}` : ''
  return `approval on msg ${a.message_id} for ${a.action}: ${a.status}${decision}${by}${args}${comment}`
}

/** One line per event of the log. */
export function eventLine(e: EventFrame): string {
  const head = `${e.cursor} ${e.type} in ${e.channel_id}`
  switch (e.type) {
    case 'new_message':
    case 'message_updated':
      return `${head}: ${messageLine(bounded(e.message))}`
    case 'message_stream_started':
      return `${head}: streaming: ${messageLine(bounded(e.message))}`
    case 'message_stream_finished':
      return `${head}: stream ${e.message.stream_state}: ${messageLine(bounded(e.message))}`
    case 'message_stop_requested':
      return `${head}: ${e.requested_by_name} (${e.requested_by_id}) asks ${e.author_id} to stop streaming msg ${e.message_id}: finish_stream or cancel it`
    case 'message_deleted':
      return `${head}: message ${e.message_id}`
    case 'member_joined':
      return `${head}: ${e.member_name} (${e.member_type}, ${e.member_id})`
    case 'member_left':
      return `${head}: ${e.member_type} ${e.member_id}`
    case 'channel_created':
    case 'channel_updated':
      return `${head}: #${e.channel.name} (${e.channel.type})`
    case 'channel_deleted':
      return head
    case 'message_mentioned':
      return `${head}: mentions ${e.mentioned_ids.join(', ')}: ${messageLine(bounded(e.message))}`
    case 'reaction_added':
    case 'reaction_removed':
      return `${head}: ${e.member_name} (${e.member_type}, ${e.member_id}) ${e.type === 'reaction_added' ? 'reacted' : 'took back'} ${e.emoji} on msg ${e.message_id} (now ${e.count})`
    case 'approval_decided':
    case 'approval_expired':
    case 'approval_cancelled':
      return `${head}: ${approvalLine(e.approval)}`
  }
}

/** Characters an event adds to a page (its message text, if any). */
export function eventSize(e: EventFrame): number {
  return 200 + ('message' in e ? Math.min(e.message.text.length, MAX_MESSAGE_CHARS) : 0)
}

/** The event with any message text cut to MAX_MESSAGE_CHARS. */
export function boundedEvent(e: EventFrame): EventFrame {
  return 'message' in e ? { ...e, message: bounded(e.message) } : e
}
