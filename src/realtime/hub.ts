// The hub of one instance: which local sockets belong to which member, which channels those
// members are in, and delivery of log entries to them. Membership is checked for every entry at
// delivery time against a per-instance cache of the connected members' channels, loaded when a
// member's first socket connects and kept current by the member.joined / member.left /
// channel.deleted events themselves (which arrive in log order, before any later message of the
// channel). Each entry is encoded once and the same buffer is sent to every recipient.
import type { FastifyBaseLogger } from 'fastify'
import { filteredOut, type EventFilter } from '../events/filter.ts'
import type { DomainEvent } from '../events/types.ts'
import type { LogEntry } from './broker.ts'
import { compareCursors, type Cursor } from './cursor.ts'
import { isClientEvent, toEventFrame } from './frames.ts'

/** One socket, as the hub sees it. */
export interface Client extends EventFilter {
  readonly memberId: string
  /** Sends an encoded frame (the socket enforces its own send-queue bound). */
  send(frame: Buffer): void
  /** Entries received while the socket is catching up (replay); null once it is live. */
  pending: LogEntry[] | null
  /** Entries at or below this cursor were already sent (replay) or predate the connection. */
  floor: Cursor | null
  /** Takes ephemeral signals (typing, status, presence): WebSockets do, SSE and long polls do not. */
  readonly signals?: boolean
  /** Takes the signals meant for SSE too (message deltas): SSE streams do. */
  readonly sseSignals?: boolean
}

/** A message.mentioned event goes only to the members it notifies (docs/decisions.md, "Mentions"). */
function sentTo(memberId: string, event: DomainEvent): boolean {
  return event.type !== 'message.mentioned' || event.payload.mentioned_ids.includes(memberId)
}

/** Whether this client's filter (`only`, `include_own_messages`; src/events/filter.ts) leaves the event out. */
const optedOut = (client: Client, event: DomainEvent): boolean => filteredOut(client, client.memberId, event)

/** The channels a member receives live: its own, or also every regular one (the workspace owner). */
export interface LiveChannels {
  channelIds: string[]
  readsAllRegular: boolean
}

interface MemberState {
  clients: Set<Client>
  /** Channel ids; null while loading. */
  channels: Set<string> | null
  /** The workspace owner: every regular channel, joined or not (new ones included). */
  readsAllRegular: boolean
  loading: Promise<void>
  /** Membership changes seen while loading, applied on top of the loaded set. */
  queued: DomainEvent[]
}

/** Whether a member with these channels may see the event (current membership, or its audience). */
export function visibleTo(memberId: string, channels: ReadonlySet<string>, event: DomainEvent): boolean {
  if (!isClientEvent(event) || !sentTo(memberId, event)) return false
  return channels.has(event.channelId!) || (event.audience?.includes(memberId) ?? false)
}

export const encodeFrame = (frame: unknown): Buffer => Buffer.from(JSON.stringify(frame))

export class Hub {
  private readonly members = new Map<string, MemberState>()
  /** channel id → ids of local members (with loaded membership) in it. */
  private readonly channelMembers = new Map<string, Set<string>>()
  private readonly catchingUp = new Set<Client>()

  constructor(
    private readonly loadChannels: (memberId: string) => Promise<LiveChannels>,
    private readonly log: FastifyBaseLogger,
  ) {}

  get size(): number {
    let n = 0
    for (const state of this.members.values()) n += state.clients.size
    return n
  }

  /**
   * Registers a socket before its replay: from now on every entry is kept in `client.pending`
   * until `goLive`. Resolves once the member's channels are known.
   */
  async add(client: Client): Promise<void> {
    client.pending = []
    this.catchingUp.add(client)
    let state = this.members.get(client.memberId)
    if (!state) {
      const fresh: MemberState = { clients: new Set(), channels: null, readsAllRegular: false, loading: Promise.resolve(), queued: [] }
      fresh.loading = this.load(client.memberId, fresh)
      this.members.set(client.memberId, fresh)
      state = fresh
    }
    state.clients.add(client)
    await state.loading
  }

  private async load(memberId: string, state: MemberState): Promise<void> {
    try {
      const { channelIds, readsAllRegular } = await this.loadChannels(memberId)
      if (this.members.get(memberId) !== state) return
      state.channels = new Set()
      state.readsAllRegular = readsAllRegular
      for (const id of channelIds) this.join(memberId, state, id)
      for (const event of state.queued) {
        // A new channel concerns only this member here (the others had it applied already).
        if (event.type === 'channel.created') {
          if (readsAllRegular) this.join(memberId, state, event.channelId)
        } else this.applyMembership(event)
      }
      state.queued = []
    } catch (error) {
      // Let the next connection of this member try again.
      if (this.members.get(memberId) === state) this.members.delete(memberId)
      throw error
    }
  }

  /** Whether this member (with a socket here) may see the event now. */
  mayReceive(memberId: string, event: DomainEvent): boolean {
    const channels = this.members.get(memberId)?.channels
    return channels ? visibleTo(memberId, channels, event) : false
  }

  /** Whether the member (with a socket here) is in the channel now; false while unknown. */
  isMemberOf(memberId: string, channelId: string): boolean {
    return this.members.get(memberId)?.channels?.has(channelId) ?? false
  }

  /**
   * An ephemeral signal (src/realtime/signals.ts): to the live sockets here of the current members
   * of its channels, once per socket, never to `except`. Nothing is buffered or replayed.
   */
  deliverSignal(channelIds: string[] | 'workspace', except: string | null, frame: Buffer, sse = false): void {
    const takes = (client: Client): boolean => (client.signals === true || (sse && client.sseSignals === true)) && !client.pending
    if (channelIds === 'workspace') {
      for (const [memberId, state] of this.members) {
        if (memberId === except) continue
        for (const client of state.clients) if (takes(client)) client.send(frame)
      }
      return
    }
    const seen = new Set<string>()
    for (const channelId of channelIds) {
      for (const memberId of this.channelMembers.get(channelId) ?? []) {
        if (memberId === except || seen.has(memberId)) continue
        seen.add(memberId)
        for (const client of this.members.get(memberId)?.clients ?? []) if (takes(client)) client.send(frame)
      }
    }
  }

  /** Whether this socket gets the event: its member may see it, and it did not opt out of it. */
  wants(client: Client, event: DomainEvent): boolean {
    return this.mayReceive(client.memberId, event) && !optedOut(client, event)
  }

  /**
   * Ends the catch-up: sends the buffered entries after `floor` that the member may see, then
   * delivers live. Synchronous, so no entry slips between the buffer and live delivery.
   */
  goLive(client: Client, floor: Cursor): void {
    const pending = client.pending ?? []
    client.pending = null
    this.catchingUp.delete(client)
    let last = floor
    for (const entry of pending) {
      if (compareCursors(entry.cursor, last) <= 0) continue
      last = entry.cursor
      if (!this.wants(client, entry.event)) continue
      const frame = toEventFrame(entry)
      if (frame) client.send(encodeFrame(frame))
    }
    client.floor = last
  }

  remove(client: Client): void {
    this.catchingUp.delete(client)
    client.pending = null
    const state = this.members.get(client.memberId)
    if (!state || !state.clients.delete(client) || state.clients.size) return
    this.members.delete(client.memberId)
    for (const channelId of state.channels ?? []) this.unindex(client.memberId, channelId)
  }

  /** Broker listener: every entry of the log, in order. */
  readonly dispatch = (entries: LogEntry[]): void => {
    const joiners = this.joinersByChannel(entries)
    for (const entry of entries) {
      try {
        this.deliver(entry, joiners)
      } catch (error) {
        this.log.error({ err: error, eventId: entry.event.id }, 'event delivery failed')
      }
    }
  }

  /** Members added by the same batch (a new channel or DM is followed by its member.joined). */
  private joinersByChannel(entries: LogEntry[]): Map<string, string[]> {
    const out = new Map<string, string[]>()
    for (const { event } of entries) {
      if (event.type !== 'member.joined' || !event.channelId) continue
      const list = out.get(event.channelId) ?? []
      list.push(String(event.payload.member_id))
      out.set(event.channelId, list)
    }
    return out
  }

  private deliver(entry: LogEntry, joiners: Map<string, string[]>): void {
    const { event } = entry
    const clientEvent = isClientEvent(event)
    if (clientEvent) for (const client of this.catchingUp) client.pending!.push(entry)

    // Removals take effect after this event's recipients are chosen (the removed member still
    // gets member_left / channel_deleted); additions before (the new member gets member_joined).
    const removal = event.type === 'member.left' || event.type === 'channel.deleted'
    if (!removal) this.applyMembership(event)
    const recipients = clientEvent ? this.recipients(event, joiners) : null
    if (removal) this.applyMembership(event)
    if (!recipients?.size) return

    let frame: Buffer | null = null
    for (const memberId of recipients) {
      const state = this.members.get(memberId)
      if (!state || !sentTo(memberId, event)) continue
      for (const client of state.clients) {
        if (client.pending) continue // catching up: it has the entry in its buffer
        if (client.floor && compareCursors(entry.cursor, client.floor) <= 0) continue
        if (optedOut(client, event)) continue
        frame ??= encodeFrame(toEventFrame(entry))
        client.floor = entry.cursor
        client.send(frame)
      }
    }
  }

  private recipients(event: DomainEvent, joiners: Map<string, string[]>): Set<string> {
    const ids = new Set(this.channelMembers.get(event.channelId!))
    for (const id of event.audience ?? []) if (this.members.has(id)) ids.add(id)
    if (event.type === 'channel.created') {
      for (const id of joiners.get(event.channelId) ?? []) if (this.members.has(id)) ids.add(id)
      const creator = event.payload.creator_id
      if (typeof creator === 'string' && this.members.has(creator)) ids.add(creator)
    }
    return ids
  }

  private applyMembership(event: DomainEvent): void {
    const channelId = event.channelId
    if (!channelId) return
    if (event.type === 'channel.created' && event.payload.channel.type === 'channel') {
      // The owner reads every regular channel: a new one is theirs at once.
      for (const [memberId, state] of this.members) {
        if (!state.channels) state.queued.push(event)
        else if (state.readsAllRegular) this.join(memberId, state, channelId)
      }
    } else if (event.type === 'member.joined' || event.type === 'member.left') {
      const memberId = String(event.payload.member_id)
      const state = this.members.get(memberId)
      if (!state) return
      if (!state.channels) state.queued.push(event)
      else if (event.type === 'member.joined') this.join(memberId, state, channelId)
      // The owner still reads a regular channel it left (a DM cannot be left).
      else if (!state.readsAllRegular) {
        state.channels.delete(channelId)
        this.unindex(memberId, channelId)
      }
    } else if (event.type === 'channel.deleted') {
      for (const memberId of this.channelMembers.get(channelId) ?? []) this.members.get(memberId)?.channels?.delete(channelId)
      this.channelMembers.delete(channelId)
      for (const state of this.members.values()) if (!state.channels) state.queued.push(event)
    }
  }

  private join(memberId: string, state: MemberState, channelId: string): void {
    state.channels!.add(channelId)
    let set = this.channelMembers.get(channelId)
    if (!set) this.channelMembers.set(channelId, (set = new Set()))
    set.add(memberId)
  }

  private unindex(memberId: string, channelId: string): void {
    const set = this.channelMembers.get(channelId)
    if (!set) return
    set.delete(memberId)
    if (!set.size) this.channelMembers.delete(channelId)
  }
}
