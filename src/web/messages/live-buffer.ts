// The last live messages of each conversation, kept briefly so that a page fetched while one of
// them arrived cannot leave a gap: when a fetch reaches the newest messages, whatever arrived
// live meanwhile and is newer than the page is added to it. Ids are UUIDv7: they sort in posting
// order as strings, which is also how the server orders them.
import type { Message } from './types.ts'

const KEEP = 200
const recent = new Map<string, Message[]>()

export function rememberLive(message: Message): void {
  const list = recent.get(message.channel_id) ?? []
  if (list.some((m) => m.id === message.id)) return
  list.push(message)
  if (list.length > KEEP) list.splice(0, list.length - KEEP)
  recent.set(message.channel_id, list)
}

export function updateLive(message: Message): void {
  const list = recent.get(message.channel_id)
  const at = list?.findIndex((m) => m.id === message.id) ?? -1
  if (list && at >= 0) list[at] = message
}

export function forgetLive(channelId: string, messageId: string): void {
  const list = recent.get(channelId)
  if (list)
    recent.set(
      channelId,
      list.filter((m) => m.id !== messageId),
    )
}

/** Live messages newer than `newestId` (all of them when it is null), newest first. */
export function liveNewerThan(channelId: string, newestId: string | null): Message[] {
  return (recent.get(channelId) ?? []).filter((m) => newestId === null || m.id > newestId).reverse()
}

/** Signing out or switching people: nothing of one session's conversations stays. */
export function clearLive(): void {
  recent.clear()
}
