// Ephemeral signals: typing, agent status and presence (docs/decisions.md, "Typing and
// presence"). They are pushed to the current members of some channels and forgotten: never
// written to the outbox or the event log, never replayed, never sent to webhooks. With Redis they
// cross instances through one pub/sub channel; every instance (the publishing one included)
// hands what it hears to its hub, which checks membership at delivery like it does for events.
import type { FastifyBaseLogger } from 'fastify'
import type { Redis } from 'ioredis'
import { Type, type Static } from 'typebox'
import type { MemberPrincipal } from '../modules/identity/principal.ts'
import { subscribeWhenReady } from '../plugins/redis.ts'
import { Timestamp, Uuid } from '../schemas/common.ts'

const ActorType = Type.Union([Type.Literal('AGENT'), Type.Literal('HUMAN')])

export const TypingFrame = Type.Object(
  {
    type: Type.Literal('typing'),
    channel_id: Uuid,
    member_id: Uuid,
    member_type: ActorType,
    member_name: Type.String(),
  },
  {
    additionalProperties: false,
    title: 'typing',
    description:
      'Another member of the channel is typing (sent to the other members, not to the typist; at most one per member and channel every 3 seconds). Show it for about 5 seconds unless another arrives. Not part of the event log: no cursor, never replayed.',
  },
)

export const AgentStatusFrame = Type.Object(
  {
    type: Type.Literal('agent_status'),
    agent_id: Uuid,
    text: Type.Union([Type.String(), Type.Null()], { description: 'The status text; null: cleared.' }),
    expires_at: Type.Union([Timestamp, Type.Null()], { description: 'When the status stops showing; null when cleared.' }),
  },
  {
    additionalProperties: false,
    title: 'agent_status',
    description: "An agent set or cleared its status (sent to the members of the agent's channels). Not part of the event log.",
  },
)

export const PresenceFrame = Type.Object(
  {
    type: Type.Literal('presence'),
    member_id: Uuid,
    member_type: ActorType,
    agent_id: Type.Optional({ ...Uuid, description: 'An agent: its id (the same as `member_id`; kept for clients written before humans had presence). Absent for humans.' }),
    online: Type.Boolean({ description: 'Whether the member has an open WebSocket on any instance.' }),
    last_seen_at: Timestamp,
  },
  {
    additionalProperties: false,
    title: 'presence',
    description: "An agent or a human connected (its first socket) or disconnected (its last one); sent to the members of the member's channels. Not part of the event log.",
  },
)

export const UserUpdatedFrame = Type.Object(
  {
    type: Type.Literal('user_updated'),
    user_id: Uuid,
    display_name: Type.String(),
    avatar_url: Type.Union([Type.String(), Type.Null()]),
  },
  {
    additionalProperties: false,
    title: 'user_updated',
    description:
      'A human changed their display name or avatar (PATCH /api/v1/auth/me); sent to every connected WebSocket of the workspace, theirs included. Not part of the event log: a client that reconnects reloads people over REST.',
  },
)

export const TypingClientFrame = Type.Object(
  { type: Type.Literal('typing'), channel_id: Uuid },
  {
    additionalProperties: true,
    title: 'typing',
    description:
      'The sender is typing in this channel (members who may post). Not answered when accepted; more than one per channel every 3 seconds is dropped silently. A channel one is not a member of: `error` NOT_FOUND; observers: `error` FORBIDDEN. Properties not listed here are ignored.',
  },
)

// Streaming messages (docs/decisions.md, "Streaming messages (issue 25)"): the text an agent
// appends travels as these frames, never as events; the message row keeps the text so far.
export const MessageDeltaFrame = Type.Object(
  {
    type: Type.Literal('message_delta'),
    channel_id: Uuid,
    message_id: Uuid,
    thread_id: Type.Union([Uuid, Type.Null()], { description: "The streaming message's thread (its root's id); null for a root." }),
    seq: Type.Integer({ minimum: 1, description: 'The sequence number of the last append this frame carries (appends are numbered from 1 per stream; a frame may carry several).' }),
    offset: Type.Integer({
      minimum: 0,
      description:
        "Where `text` starts in the message's text, in UTF-16 code units (JavaScript's String length): the text is `text.slice(0, offset) + delta.text`. An offset beyond what a client holds means it missed a frame: read the message again over REST (it holds the text so far).",
    }),
    text: Type.String({ description: 'The appended text (one or more appends, coalesced: frames of a stream at least 80 ms apart, no append waiting longer).' }),
  },
  {
    additionalProperties: false,
    title: 'message_delta',
    description:
      "Text appended to a streaming message (between `message_stream_started` and `message_stream_finished`), sent to the channel's current members on WebSockets and SSE streams. Not part of the event log: no cursor, never replayed; a late joiner reads the message over REST (its text so far) and applies the frames whose text goes beyond it.",
  },
)

const StepStateField = Type.Union([Type.Literal('pending'), Type.Literal('in_progress'), Type.Literal('complete'), Type.Literal('error')])
export const MessageStatusFrame = Type.Object(
  {
    type: Type.Literal('message_status'),
    channel_id: Uuid,
    message_id: Uuid,
    thread_id: Type.Union([Uuid, Type.Null()]),
    status: Type.Union(
      [
        Type.Object({ title: Type.String(), steps: Type.Array(Type.Object({ title: Type.String(), state: StepStateField }, { additionalProperties: false })) }, { additionalProperties: false }),
        Type.Null(),
      ],
      { description: 'The whole status (title and steps), replacing the previous one; null: cleared.' },
    ),
  },
  {
    additionalProperties: false,
    title: 'message_status',
    description:
      'The agent streaming a message set what it is doing (a title and steps), shown beside the message; it is cleared when the stream ends (`message_stream_finished`). Sent like `message_delta` (WebSockets and SSE, not in the log); a late joiner reads it with GET …/messages/{message_id}/stream.',
  },
)

export const ThreadStatusFrame = Type.Object(
  {
    type: Type.Literal('thread_status'),
    channel_id: Uuid,
    thread_id: Uuid,
    agent_id: Uuid,
    agent_name: Type.String(),
    status: MessageStatusFrame.properties.status,
  },
  {
    additionalProperties: false,
    title: 'thread_status',
    description:
      "An agent set what it is doing in a thread before it answers there (no stream; a title and steps, as `message_status`), shown under the thread's root; `status: null` when it is cleared (by the agent, by its reply in the thread, or after STREAM_IDLE_SECONDS unchanged). Sent like `message_status` (WebSockets and SSE, not in the log); a late joiner reads GET …/messages/{message_id}/thread/status.",
  },
)

export type SignalFrame =
  | Static<typeof TypingFrame>
  | Static<typeof AgentStatusFrame>
  | Static<typeof PresenceFrame>
  | Static<typeof UserUpdatedFrame>
  | Static<typeof MessageDeltaFrame>
  | Static<typeof MessageStatusFrame>
  | Static<typeof ThreadStatusFrame>

/** One signal: the frame, the channels whose current members get it, and who does not. */
export interface Signal {
  /** `workspace`: every connected member (a change of someone everyone may list). */
  channelIds: string[] | 'workspace'
  /** A member who never gets it (the typist). */
  except: string | null
  frame: SignalFrame
  /** Also to SSE streams (message deltas), not only to WebSockets. */
  sse?: boolean
}

export function typingFrame(principal: MemberPrincipal, channelId: string): Static<typeof TypingFrame> {
  return { type: 'typing', channel_id: channelId, member_id: principal.id, member_type: principal.kind === 'agent' ? 'AGENT' : 'HUMAN', member_name: principal.displayName }
}

/** Signals held while the Redis connection is not ready (src/realtime/signals.ts, Signals.hold). */
const MAX_HELD = 1_000

/** Seconds between two typing signals of one member (or connection) in one channel. */
export const TYPING_INTERVAL_MS = 3_000

/** Accepts at most one key per interval; bounded (old keys are forgotten as the map grows). */
export class Throttle {
  private readonly last = new Map<string, number>()

  constructor(
    private readonly intervalMs: number,
    private readonly maxKeys = 10_000,
  ) {}

  allow(key: string, now: number): boolean {
    const previous = this.last.get(key)
    if (previous !== undefined && now - previous < this.intervalMs) return false
    if (this.last.size >= this.maxKeys) this.prune(now)
    this.last.set(key, now)
    return true
  }

  private prune(now: number): void {
    for (const [key, at] of this.last) if (now - at >= this.intervalMs) this.last.delete(key)
    // Still full: every key is recent; forget the oldest half rather than grow.
    if (this.last.size >= this.maxKeys) [...this.last.keys()].slice(0, this.maxKeys / 2).forEach((k) => this.last.delete(k))
  }
}

export class Signals {
  private subscriber: Redis | null = null

  constructor(
    private readonly deliver: (signal: Signal) => void,
    private readonly log: FastifyBaseLogger,
    private readonly redis: { publisher: Redis; subscriber: () => Redis; channel: string } | null = null,
  ) {}

  /** Typing sent over REST: one per member and channel every TYPING_INTERVAL_MS on this instance; extras are dropped. */
  private readonly restTyping = new Throttle(TYPING_INTERVAL_MS)

  typing(principal: MemberPrincipal, channelId: string): void {
    if (!this.restTyping.allow(`${principal.id}:${channelId}`, Date.now())) return
    this.publish({ channelIds: [channelId], except: principal.id, frame: typingFrame(principal, channelId) })
  }

  /** Sends the signal on its way; one that cannot be sent is dropped (it is ephemeral). */
  publish(signal: Signal): void {
    if (!this.redis) return this.safeDeliver(signal)
    const { publisher } = this.redis
    // Not connected yet, or reconnecting: hold the signal (bounded) and send it once ready,
    // instead of a refused command per signal.
    if (publisher.status !== 'ready') return this.hold(signal)
    this.send(JSON.stringify(signal))
  }

  /** Signals waiting for the publisher's connection, oldest first; at most MAX_HELD. */
  private held: string[] = []

  private hold(signal: Signal): void {
    const publisher = this.redis!.publisher
    if (this.held.length === 0) publisher.once('ready', () => this.flush())
    this.held.push(JSON.stringify(signal))
    // A long outage: typing and presence of minutes ago are worth nothing; keep the newest.
    if (this.held.length > MAX_HELD) this.held.splice(0, this.held.length - MAX_HELD)
  }

  private flush(): void {
    const held = this.held
    this.held = []
    for (const raw of held) this.send(raw)
  }

  private send(raw: string): void {
    this.redis!.publisher.publish(this.redis!.channel, raw).catch((error: unknown) => this.log.warn({ err: error }, 'could not publish a signal'))
  }

  async start(): Promise<void> {
    if (!this.redis || this.subscriber) return
    const sub = this.redis.subscriber()
    this.subscriber = sub
    sub.on('message', (_channel: string, raw: string) => {
      let signal: Signal
      try {
        signal = JSON.parse(raw) as Signal
      } catch {
        return
      }
      this.safeDeliver(signal)
    })
    await subscribeWhenReady(sub, this.redis.channel, (error) => this.log.warn({ err: error }, 'could not subscribe to signals'))
  }

  async stop(): Promise<void> {
    const sub = this.subscriber
    this.subscriber = null
    if (sub) await sub.quit().catch(() => sub.disconnect())
  }

  private safeDeliver(signal: Signal): void {
    try {
      this.deliver(signal)
    } catch (error) {
      this.log.error({ err: error }, 'signal delivery failed')
    }
  }
}
