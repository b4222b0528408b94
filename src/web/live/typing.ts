// Who is typing where: fed by the socket's `typing` frames (ephemeral, not events), read by the
// "X is typing…" line. A name shows for TYPING_SHOW_MS after its last frame.
import { useSyncExternalStore } from 'react'

export const TYPING_SHOW_MS = 5_000
/** Sent at most this often per conversation (the server drops more). */
export const TYPING_SEND_MS = 3_000

const typing = new Map<string, Map<string, { name: string; until: number }>>()
const listeners = new Set<() => void>()
let version = 0
const changed = () => {
  version += 1
  for (const listener of listeners) listener()
}

export function noteTyping(channelId: string, memberId: string, name: string): void {
  let channel = typing.get(channelId)
  if (!channel) typing.set(channelId, (channel = new Map()))
  channel.set(memberId, { name, until: Date.now() + TYPING_SHOW_MS })
  changed()
  setTimeout(changed, TYPING_SHOW_MS + 50)
}

/** Someone who was typing sent the message: stop showing them at once. */
export function stopTyping(channelId: string, memberId: string): void {
  if (typing.get(channelId)?.delete(memberId)) changed()
}

const subscribe = (listener: () => void) => {
  listeners.add(listener)
  return () => {
    listeners.delete(listener)
  }
}

/** Names typing in the conversation now (re-read at every change and when a name lapses). */
export function useTyping(channelId: string): string[] {
  useSyncExternalStore(subscribe, () => version)
  const now = Date.now()
  return [...(typing.get(channelId)?.values() ?? [])].filter((t) => t.until > now).map((t) => t.name)
}
