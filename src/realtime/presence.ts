// Which members (agents, and humans since issue 24; keyed by id) have an open WebSocket
// (docs/decisions.md, "Typing and presence"). Each instance counts its own sockets per member.
// With Redis, an instance also keeps one entry per member it holds in a sorted set
// `<prefix>presence:<member id>` (member: the instance, score: an expiry it refreshes at every
// heartbeat), so a member is online while any live instance has a socket of it; an instance that
// dies stops refreshing and its entries lapse. Without Redis, the counts are all.
import type { Redis } from 'ioredis'
import { uuidv7 } from '../lib/ids.ts'
import { withTimeout } from '../lib/timeout.ts'

const REFRESH_SLICE = 500
/**
 * How long a presence read or write waits for Redis. A stalled Redis (connected, not answering)
 * must not hold a request that shows an agent (GET /agents/me) or a socket's opening: past this,
 * presence is what this instance knows.
 */
const REDIS_WAIT_MS = 500

export class Presence {
  private readonly local = new Map<string, number>()
  readonly instanceId = uuidv7()

  constructor(
    private readonly redis: Redis | null,
    private readonly prefix: string,
    private readonly ttlMs: number,
  ) {}

  private key(agentId: string): string {
    return `${this.prefix}presence:${agentId}`
  }

  /** A socket of the agent opened here; true when it is the agent's first on this instance. */
  async connected(agentId: string): Promise<boolean> {
    const n = (this.local.get(agentId) ?? 0) + 1
    this.local.set(agentId, n)
    if (n === 1 && this.redis) {
      const key = this.key(agentId)
      await withTimeout(
        this.redis
          .multi()
          .zadd(key, Date.now() + this.ttlMs, this.instanceId)
          .pexpire(key, this.ttlMs)
          .exec(),
        REDIS_WAIT_MS,
      ).catch(() => null)
    }
    return n === 1
  }

  /** A socket closed; true when the agent now has none anywhere (as far as this instance knows). */
  async disconnected(agentId: string): Promise<boolean> {
    const n = (this.local.get(agentId) ?? 1) - 1
    if (n > 0) {
      this.local.set(agentId, n)
      return false
    }
    this.local.delete(agentId)
    if (!this.redis) return true
    try {
      const [, count] = await withTimeout(Promise.all([this.redis.zrem(this.key(agentId), this.instanceId), this.redis.zcount(this.key(agentId), Date.now(), '+inf')]), REDIS_WAIT_MS)
      return count === 0
    } catch {
      return true
    }
  }

  /** The agents among `ids` with an open socket on some instance. */
  async online(ids: string[]): Promise<Set<string>> {
    const out = new Set(ids.filter((id) => this.local.has(id)))
    if (!this.redis || !ids.length) return out
    try {
      const now = Date.now()
      const pipeline = this.redis.pipeline()
      for (const id of ids) pipeline.zcount(this.key(id), now, '+inf')
      const results = (await withTimeout(pipeline.exec(), REDIS_WAIT_MS)) ?? []
      results.forEach(([error, count], i) => {
        if (!error && Number(count) > 0) out.add(ids[i]!)
      })
    } catch {
      // Redis away: what this instance knows.
    }
    return out
  }

  /** Heartbeat: pushes this instance's entries' expiry forward. */
  async refresh(): Promise<void> {
    if (!this.redis || !this.local.size) return
    const expiry = Date.now() + this.ttlMs
    // In slices, so a large instance's refresh does not hold the event loop in one go.
    const ids = [...this.local.keys()]
    for (let i = 0; i < ids.length; i += REFRESH_SLICE) {
      const pipeline = this.redis.pipeline()
      for (const agentId of ids.slice(i, i + REFRESH_SLICE)) pipeline.zadd(this.key(agentId), expiry, this.instanceId).pexpire(this.key(agentId), this.ttlMs)
      await withTimeout(pipeline.exec(), REDIS_WAIT_MS)
    }
  }

  /** Shutdown: this instance's entries go at once. */
  async clear(): Promise<void> {
    const ids = [...this.local.keys()]
    this.local.clear()
    if (!this.redis || !ids.length) return
    const pipeline = this.redis.pipeline()
    for (const id of ids) pipeline.zrem(this.key(id), this.instanceId)
    await withTimeout(pipeline.exec(), REDIS_WAIT_MS).catch(() => undefined)
  }
}
