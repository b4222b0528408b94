// Messages written while the connection is down wait here, visibly, and go out when it is back
// (the browser says it is online again, or the live connection reconnects). Each carries its own
// Idempotency-Key from the start, so a retry after a lost answer never posts it twice. The queue
// is kept in localStorage per person, so even a reload or a closed tab does not lose it. Files are
// not queued (they do not fit in storage): a file that cannot be sent stays in the composer,
// marked as not sent.
import { useSyncExternalStore } from 'react'
import { api, unwrap } from '../api/client.ts'
import { ApiError, sentenceFor } from '../api/errors.ts'

export interface Queued {
  /** Also the Idempotency-Key of the post. */
  id: string
  channelId: string
  text: string
  queuedAt: string
  /** Why the server refused it (it will not be retried), or null while it waits to be sent. */
  refused: string | null
}

const listeners = new Set<() => void>()
let owner: string | null = null
let items: Queued[] = []
let flushing = false

const storageKey = (userId: string) => `ams.outbox.${userId}`

function save(): void {
  if (owner) {
    if (items.length) localStorage.setItem(storageKey(owner), JSON.stringify(items))
    else localStorage.removeItem(storageKey(owner))
  }
  for (const listener of listeners) listener()
}

/** Loads the signed-in person's queue (another person's is never shown). */
export function openOutbox(userId: string): void {
  if (owner === userId) return
  owner = userId
  try {
    items = JSON.parse(localStorage.getItem(storageKey(userId)) ?? '[]') as Queued[]
  } catch {
    items = []
  }
  save()
}

export function enqueue(channelId: string, text: string, id: string = crypto.randomUUID()): void {
  items = [...items, { id, channelId, text, queuedAt: new Date().toISOString(), refused: null }]
  save()
}

export function discard(id: string): void {
  items = items.filter((item) => item.id !== id)
  save()
}

/** A network failure or an outage: worth sending again later. A refusal (4xx) is not. */
export function isTransient(error: unknown): boolean {
  return !(error instanceof ApiError) || error.status === 0 || error.status === 503 || error.status === 502 || error.status === 504
}

export function postText(channelId: string, text: string, idempotencyKey: string) {
  return unwrap(api.POST('/api/v1/channels/{id}/messages', { params: { path: { id: channelId }, header: { 'idempotency-key': idempotencyKey } }, body: { text } }))
}

/**
 * Sends what waits, oldest first, one at a time so the order holds. Stops at the first message
 * that cannot go yet (still offline); a refused one is marked and the rest go on.
 */
export async function flushOutbox(onSent?: (channelId: string) => void): Promise<void> {
  if (flushing || !navigator.onLine) return
  flushing = true
  try {
    for (const item of items.filter((i) => i.refused === null)) {
      try {
        await postText(item.channelId, item.text, item.id)
        discard(item.id)
        onSent?.(item.channelId)
      } catch (error) {
        if (isTransient(error)) return
        items = items.map((i) => (i.id === item.id ? { ...i, refused: sentenceFor(error) } : i))
        save()
      }
    }
  } finally {
    flushing = false
  }
}

export function useOutbox(channelId: string): Queued[] {
  const all = useSyncExternalStore(
    (listener) => {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    () => items,
  )
  return all.filter((item) => item.channelId === channelId)
}
