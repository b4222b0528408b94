// Resource-updated notifications for channels, in both protocol revisions: a 2025 session's
// `resources/subscribe` and a 2026 `subscriptions/listen` stream are each one watcher over a set
// of channel ids. Every log entry of a watched channel (new, edited or deleted messages, members,
// renames) is coalesced per watcher and channel over UPDATE_COALESCE_MS, then membership is
// checked again at delivery: a member removed from the channel stops being told (the event
// addressed to it says so once).
import type { FastifyInstance } from 'fastify'
import { readableChannel } from '../modules/channels/access.ts'
import type { LogEntry } from '../realtime/broker.ts'
import { isClientEvent } from '../realtime/frames.ts'
import type { McpCaller } from './caller.ts'
import { CHANNEL_URI_PREFIX } from './server.ts'

/** Resource-updated notifications of a channel are coalesced over this window. */
const UPDATE_COALESCE_MS = 250

export interface ChannelWatcher {
  caller: McpCaller
  /** Ids of the watched channels (changes as the client subscribes and unsubscribes). */
  channels: Set<string>
  notify: (uri: string) => unknown
}

export class ChannelWatchers {
  private readonly watchers = new Set<ChannelWatcher>()
  private readonly pending = new WeakMap<ChannelWatcher, Set<string>>()

  constructor(private readonly app: FastifyInstance) {}

  get size(): number {
    return this.watchers.size
  }

  /** Starts delivering to `watcher`; the function returned stops it. */
  add(watcher: ChannelWatcher): () => void {
    this.watchers.add(watcher)
    return () => void this.watchers.delete(watcher)
  }

  /** The broker's entry listener. */
  readonly dispatch = (entries: LogEntry[]): void => {
    for (const watcher of this.watchers) {
      if (!watcher.channels.size) continue
      for (const entry of entries) {
        const channelId = entry.event.channelId
        if (channelId && isClientEvent(entry.event) && watcher.channels.has(channelId)) this.changed(watcher, channelId, entry)
      }
    }
  }

  private changed(watcher: ChannelWatcher, channelId: string, entry: LogEntry): void {
    let pending = this.pending.get(watcher)
    if (!pending) this.pending.set(watcher, (pending = new Set()))
    if (pending.has(channelId)) return
    pending.add(channelId)
    setTimeout(() => {
      pending.delete(channelId)
      if (!this.watchers.has(watcher) || !watcher.channels.has(channelId)) return
      const uri = `${CHANNEL_URI_PREFIX}${channelId}`
      const { principal } = watcher.caller
      // Membership is checked for every notification, not only at subscribe time.
      readableChannel(this.app.ctx, principal, channelId)
        .then(
          () => watcher.notify(uri),
          () => {
            watcher.channels.delete(channelId)
            if (entry.event.audience?.includes(principal.id)) return watcher.notify(uri)
          },
        )
        .catch((error: unknown) => this.app.log.debug({ err: error }, 'MCP resource notification not sent'))
    }, UPDATE_COALESCE_MS).unref()
  }
}
