// Recent agent-key lookups, so that a busy agent's requests skip PostgreSQL without weakening
// revocation: a revoked key, or a deleted or renamed agent, is refused or shown as it now is from
// its next request on, on every instance.
//
// - Single node: the instance that revokes forgets the key before it answers. Exact.
// - Several instances (Redis): the revoking instance also publishes the agent's id on
//   `${prefix}auth:forget`, which every instance subscribes to, and answers LEASE_MS later.
// - An instance trusts its cache only under a lease: it sends PING on its subscriber connection
//   every PING_EVERY_MS, and a reply to a PING sent at time s lets it trust the cache until
//   s + LEASE_MS. Redis delivers a connection's messages and replies in order, so by the time that
//   reply arrives every `forget` published before Redis saw the PING has been applied.
// - Why that is enough: to use the cache when a request arrives, LEASE_MS after the revoking
//   instance's PUBLISH returned, an instance needs a reply to a PING sent after that PUBLISH; the
//   reply comes after the `forget` on the same connection. An instance that was not subscribed
//   then has emptied its cache when it lost the connection and again when it subscribed anew.
// - A lookup's result is kept only if nothing was forgotten and the subscription did not drop
//   while it ran (an epoch), so a lookup that raced a revocation is not kept.
// - While the subscriber is down or its lease has lapsed, requests are looked up in PostgreSQL
//   as they would be without a cache.
// - The window left: the revoking instance cannot reach Redis while another instance can. Entries
//   expire after AUTH_CACHE_TTL_MS to bound it.
import type { FastifyInstance } from 'fastify'
import type { Redis } from 'ioredis'
import { withTimeout } from '../lib/timeout.ts'

/** What authentication needs of an agent key; never a revoked one. */
export interface CachedKey {
  keyId: string
  keyHash: string
  agentId: string
  name: string
  displayName: string
}

interface Entry {
  key: CachedKey
  expiresAt: number
}

/** How long a PING's reply lets an instance trust its cache, counted from when the PING was sent. */
export const LEASE_MS = 500
const PING_EVERY_MS = 100
/** A revocation does not wait longer than this for a stalled Redis (the TTL bounds what follows). */
const PUBLISH_TIMEOUT_MS = 1_000
const MAX_ENTRIES = 10_000

export class KeyCache {
  private readonly entries = new Map<string, Entry>()
  private epoch = 0
  /** Subscribed (always true in single-node mode, where there is nothing to subscribe to). */
  private live: boolean
  private leaseUntil = 0
  /** Moves on with every subscription gained or lost. */
  private generation = 0
  private pinging = false
  private timer: NodeJS.Timeout | null = null

  constructor(
    private readonly ttlMs: number,
    private readonly subscriber: Redis | null = null,
  ) {
    this.live = subscriber === null
    if (subscriber && ttlMs > 0) {
      this.timer = setInterval(() => this.renewLease(), PING_EVERY_MS).unref()
    }
  }

  get size(): number {
    return this.entries.size
  }

  /** Whether cached keys may be used now. */
  get trusted(): boolean {
    if (this.ttlMs <= 0 || !this.live) return false
    return this.subscriber === null || performance.now() < this.leaseUntil
  }

  get(hash: string): CachedKey | undefined {
    if (!this.trusted) return undefined
    const entry = this.entries.get(hash)
    if (!entry) return undefined
    if (entry.expiresAt > performance.now()) return entry.key
    this.entries.delete(hash)
    return undefined
  }

  /** Call before a lookup, and hand the result to `remember` with the lookup's result. */
  token(): number {
    return this.trusted ? this.epoch : -1
  }

  /** Keeps a lookup's result unless something was forgotten, or the subscription dropped, since `token`. */
  remember(hash: string, key: CachedKey, token: number): void {
    if (token !== this.epoch || !this.trusted) return
    if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!)
    this.entries.set(hash, { key, expiresAt: performance.now() + this.ttlMs })
  }

  /** Drops every cached key of this agent (on this instance). */
  forgetAgent(agentId: string): void {
    this.epoch += 1
    for (const [hash, entry] of this.entries) if (entry.key.agentId === agentId) this.entries.delete(hash)
  }

  /** The subscription is confirmed, or lost: either way nothing cached before is trusted. */
  setLive(live: boolean): void {
    this.epoch += 1
    this.generation += 1
    this.entries.clear()
    this.live = live
    this.leaseUntil = 0
    // A PING in flight when the connection dropped may never settle: ioredis drops unfulfilled
    // commands without rejecting them when it reconnects within maxRetriesPerRequest and does not
    // resend them. Waiting for it stopped the lease for good (seen in CI: the cache never trusted).
    this.pinging = false
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer)
    this.timer = null
  }

  private renewLease(): void {
    if (this.pinging || !this.live) return
    this.pinging = true
    const sentAt = performance.now()
    const generation = this.generation
    this.subscriber!.ping().then(
      () => {
        // A reply from before a reconnection proves nothing about the new subscription.
        if (this.generation !== generation) return
        this.pinging = false
        if (this.live) this.leaseUntil = Math.max(this.leaseUntil, sentAt + LEASE_MS)
      },
      () => {
        if (this.generation === generation) this.pinging = false
      },
    )
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    keyCache: KeyCache
    /** After a change to an agent or its keys is committed: every instance forgets its cached keys. */
    forgetAgentKeys: (agentId: string) => Promise<void>
  }
}

/** The subscriber's CLIENT SETNAME, so operators (and tests) can find it in CLIENT LIST. */
export const subscriberName = (prefix: string): string => `${prefix}auth-forget`

/** Creates the cache and, with Redis, its `forget` subscription; decorates the app with both. */
export function registerKeyCache(app: FastifyInstance, ttlMs: number): KeyCache {
  const channel = `${app.redisPrefix}auth:forget`
  // Subscribed by hand on every connection, and a PING lost with its connection fails rather than
  // being sent again on the next one.
  const subscriber = app.redis && ttlMs > 0 ? app.redisDuplicate({ autoResubscribe: false, autoResendUnfulfilledCommands: false, connectionName: subscriberName(app.redisPrefix) }) : null
  const cache = new KeyCache(ttlMs, subscriber)
  if (subscriber) {
    subscriber.on('message', (_channel: string, agentId: string) => cache.forgetAgent(agentId))
    // Messages published while disconnected are lost: nothing cached before survives a reconnection.
    subscriber.on('close', () => cache.setLive(false))
    subscriber.on('ready', () => {
      subscriber.subscribe(channel).then(
        () => cache.setLive(true),
        () => cache.setLive(false),
      )
    })
  }
  app.addHook('onClose', async () => cache.stop())
  app.decorate('keyCache', cache)
  app.decorate('forgetAgentKeys', async (agentId: string) => {
    cache.forgetAgent(agentId)
    if (!app.redis) return
    try {
      await withTimeout(app.redis.publish(channel, agentId), PUBLISH_TIMEOUT_MS)
    } catch (error) {
      app.log.warn({ err: error, agentId }, "could not tell other instances to forget an agent's keys; their cached copies expire within their AUTH_CACHE_TTL_MS")
      return
    }
    // Every other instance has applied the forget, or its lease has run out (see above).
    await new Promise((resolve) => setTimeout(resolve, LEASE_MS))
  })
  return cache
}
