// The sidebar's state kept current from the event stream instead of refetched: a message from
// someone else adds one to its conversation's unread count and notes its time, a read marker
// moved by this tab sets the count the server answered, and only what an event cannot tell
// (a conversation this tab has never seen, a deletion, a renamed or removed channel, this
// person joining or leaving) asks for the lists again, debounced, so a burst of such events
// costs one request. Every open page used to fetch both lists for every message it saw.
import type { QueryClient } from '@tanstack/react-query'
import type { components } from '../../sdk/client.ts'
import { sidebarKeys } from './keys.ts'

export type ChannelSummary = components['schemas']['ChannelSummary']
export type DmSummary = components['schemas']['DmList'][number]
type Conversation = ChannelSummary | DmSummary

/** When the last message arrived in each conversation this tab has seen one in (ISO time). */
const lastActivity = new Map<string, string>()
export const lastActivityOf = (channelId: string): string | undefined => lastActivity.get(channelId)

function change(queryClient: QueryClient, channelId: string, update: (c: Conversation) => Conversation): boolean {
  let found = false
  const apply = <T extends Conversation>(list: T[] | undefined): T[] | undefined => {
    if (!list) return list
    const at = list.findIndex((c) => c.id === channelId)
    if (at < 0) return list
    found = true
    const next = list.slice()
    next[at] = update(list[at]!) as T
    return next
  }
  queryClient.setQueryData<ChannelSummary[]>(sidebarKeys.channels, apply)
  queryClient.setQueryData<DmSummary[]>(sidebarKeys.dms, apply)
  return found
}

/** Whether a list has been loaded at all (an event before that has nothing to update). */
const loaded = (queryClient: QueryClient) => queryClient.getQueryData(sidebarKeys.channels) !== undefined || queryClient.getQueryData(sidebarKeys.dms) !== undefined

/**
 * A message arrived: someone else's counts as unread. A conversation not in the lists (a new DM,
 * a channel this person was just added to) is fetched with the next reconciliation.
 */
export function messageArrived(queryClient: QueryClient, channelId: string, createdAt: string, fromSomeoneElse: boolean): void {
  lastActivity.set(channelId, createdAt)
  // A channel the person reads without belonging to it (the owner) keeps no unread count.
  const found = change(queryClient, channelId, (c) => ({
    ...c,
    last_message_at: createdAt,
    unread_count: fromSomeoneElse && !('is_member' in c && !c.is_member) ? c.unread_count + 1 : c.unread_count,
  }))
  if (!found && loaded(queryClient)) void reconcileSoon(queryClient)
}

/** The server's answer to moving the read marker: the count after it. */
export function readMarked(queryClient: QueryClient, channelId: string, state: { unread_count: number; last_read_message_id: string | null }): void {
  change(queryClient, channelId, (c) => ({ ...c, unread_count: state.unread_count, last_read_message_id: state.last_read_message_id }))
}

/** A deleted channel leaves the lists at once. */
export function channelRemoved(queryClient: QueryClient, channelId: string): void {
  const without = <T extends Conversation>(list: T[] | undefined) => list?.filter((c) => c.id !== channelId)
  queryClient.setQueryData<ChannelSummary[]>(sidebarKeys.channels, without)
  queryClient.setQueryData<DmSummary[]>(sidebarKeys.dms, without)
}

export const RECONCILE_MS = 1500
let timer: ReturnType<typeof setTimeout> | null = null
let next: Promise<void> | null = null

/** Fetches both lists once, shortly: every call until then shares the one request (and promise). */
export function reconcileSoon(queryClient: QueryClient, delay = RECONCILE_MS): Promise<void> {
  if (timer && next) return next
  next = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      timer = null
      void queryClient.invalidateQueries({ queryKey: sidebarKeys.all }).finally(resolve)
    }, delay)
  })
  return next
}

/** Whether a conversation is a DM, once the lists know it (after a reconciliation if it is new). */
export async function isDm(queryClient: QueryClient, channelId: string): Promise<boolean> {
  const known = () => queryClient.getQueryData<DmSummary[]>(sidebarKeys.dms)?.some((d) => d.id === channelId) ?? false
  if (known() || queryClient.getQueryData<ChannelSummary[]>(sidebarKeys.channels)?.some((c) => c.id === channelId)) return known()
  await reconcileSoon(queryClient)
  return known()
}

/** Forgets what this tab kept (sign-out, another account). */
export function resetSidebarState(): void {
  lastActivity.clear()
  if (timer) clearTimeout(timer)
  timer = null
}
