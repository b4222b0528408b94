// What the domain modules' services and repositories are called with: built once in src/app.ts
// (`app.ctx`) from the plugins that own each piece, so a service's dependencies are in its
// signature, not reached for through the Fastify instance (which stays in routes and plugins;
// eslint.config.js holds it). What a module needs of the real-time layer, the workers or the
// auth plugin is a narrow interface of the calls it makes, nothing more.
import type { Redis } from 'ioredis'
import type { AppConfig } from '../app.ts'
import type { Database } from '../db/client.ts'
import type { DomainEventBus } from '../events/bus.ts'
import type { Signal } from '../realtime/signals.ts'
import type { MemberPrincipal } from './identity/principal.ts'
import type { InboxBell } from './inbox/bell.ts'

/** The logger's calls the services make (pino's, through Fastify's). */
export interface ServiceLog {
  warn(obj: object, msg?: string): void
}

/** Who is connected (src/realtime/presence.ts). */
export interface PresenceReader {
  /** Of these agents and users, those with an open connection on any instance. */
  online(ids: string[]): Promise<Set<string>>
}

/** Ephemeral frames to the channels' sockets, beside the event log (src/realtime/signals.ts). */
export interface SignalSink {
  typing(principal: MemberPrincipal, channelId: string): void
  publish(signal: Signal): void
}

/** Who listens on this instance's sockets (src/realtime/hub.ts). */
export interface ListenerReader {
  /** Whether the member has a socket on this instance subscribed to the channel. */
  isMemberOf(memberId: string, channelId: string): boolean
}

/** The failed-login limiter (src/plugins/login-limit.ts). */
export interface LoginLimit {
  /** Throws 429 RATE_LIMITED when the account or the address has too many recent failures. */
  assertAllowed(email: string, address: string): Promise<void>
  recordFailure(email: string, address: string): Promise<void>
  /** After a successful login: the account starts afresh (the address keeps its count). */
  clear(email: string): Promise<void>
}

/** Session tokens (src/plugins/auth.ts). */
export interface UserTokens {
  /** A session for the user; `sessionVersion` is the user's current one (0 for a new user). */
  sign(userId: string, sessionVersion?: number): string
  /** A token's expiry (seconds since the epoch), read without verifying it; null when it does not parse. */
  decode(token: string): { exp: number } | null
}

export interface ServiceContext {
  db: Database
  config: AppConfig
  events: DomainEventBus
  log: ServiceLog
  /** null in single-node mode. */
  redis: Redis | null
  redisPrefix: string
  /** No-ops (no one online, no one listening) in an app built without the real-time layer. */
  presence: PresenceReader
  signals: SignalSink
  listeners: ListenerReader
  /** Wakes the requests waiting for these members' inboxes (src/modules/inbox/bell.ts). */
  inboxBell: InboxBell
  loginLimit: LoginLimit
  /** After a change to an agent or its keys is committed: every instance forgets its cached keys. */
  forgetAgentKeys(agentId: string): Promise<void>
  tokens: UserTokens
  /** Asks the webhook and integration deliveries to look for due work now (no-op without background work). */
  kickDeliveries(): void
}
