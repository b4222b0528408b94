// Failed logins are limited per account (e-mail) and per client address: after N failures within
// the window, further attempts answer 429 with Retry-After *before* any bcrypt work, so wrong
// passwords cannot be used to guess or to burn CPU. A successful login clears the account's
// count. The counters live in Redis when REDIS_URL is set (shared by every instance), otherwise
// in memory. A Redis outage lets logins through (the bcrypt queue bound still holds).
import { createHash } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { AppError } from '../lib/errors.ts'

declare module 'fastify' {
  interface FastifyInstance {
    loginLimit: {
      /** Throws 429 RATE_LIMITED when the account or the address has too many recent failures. */
      assertAllowed: (email: string, address: string) => Promise<void>
      recordFailure: (email: string, address: string) => Promise<void>
      /** After a successful login: the account starts afresh (the address keeps its count). */
      clear: (email: string) => Promise<void>
    }
  }
}

interface Store {
  /** Current count and the milliseconds until it resets. */
  read: (key: string) => Promise<{ count: number; resetMs: number }>
  hit: (key: string, windowMs: number) => Promise<void>
  clear: (key: string) => Promise<void>
}

function memoryStore(): Store {
  const counts = new Map<string, { count: number; until: number }>()
  const live = (key: string) => {
    const entry = counts.get(key)
    if (entry && entry.until <= Date.now()) counts.delete(key)
    return entry && entry.until > Date.now() ? entry : undefined
  }
  return {
    read: async (key) => {
      const entry = live(key)
      return { count: entry?.count ?? 0, resetMs: entry ? entry.until - Date.now() : 0 }
    },
    hit: async (key, windowMs) => {
      const entry = live(key)
      if (entry) entry.count++
      else {
        // Bounded: a flood of distinct e-mails or addresses cannot grow the map without limit.
        if (counts.size >= 100_000) for (const [k, v] of counts) if (v.until <= Date.now()) counts.delete(k)
        if (counts.size >= 100_000) counts.delete(counts.keys().next().value!)
        counts.set(key, { count: 1, until: Date.now() + windowMs })
      }
    },
    clear: async (key) => {
      counts.delete(key)
    },
  }
}

function redisStore(app: FastifyInstance): Store {
  const redis = app.redis!
  const name = (key: string) => `${app.redisPrefix}login-failures:${key}`
  return {
    read: async (key) => {
      const [count, ttl] = await Promise.all([redis.get(name(key)), redis.pttl(name(key))])
      return { count: Number(count ?? 0), resetMs: Math.max(0, ttl) }
    },
    hit: async (key, windowMs) => {
      const n = await redis.incr(name(key))
      if (n === 1) await redis.pexpire(name(key), windowMs)
    },
    clear: async (key) => {
      await redis.del(name(key))
    },
  }
}

// E-mails are keyed by hash: no address book in Redis or in a heap dump.
const accountKey = (email: string): string => `account:${createHash('sha256').update(email).digest('hex')}`
const addressKey = (address: string): string => `address:${address}`

async function loginLimitPlugin(app: FastifyInstance): Promise<void> {
  const store = app.redis ? redisStore(app) : memoryStore()
  const windowMs = app.config.loginFailureWindowSeconds * 1000
  const perAccount = app.config.loginFailuresPerAccount
  const perAddress = app.config.loginFailuresPerAddress
  const tolerant = async <T>(work: () => Promise<T>, fallback: T): Promise<T> => {
    try {
      return await work()
    } catch (error) {
      app.log.warn({ err: error }, 'login failure counter unavailable; not limiting')
      return fallback
    }
  }

  app.decorate('loginLimit', {
    assertAllowed: async (email: string, address: string) => {
      const none = { count: 0, resetMs: 0 }
      const [account, client] = await Promise.all([tolerant(() => store.read(accountKey(email)), none), tolerant(() => store.read(addressKey(address)), none)])
      const blocked = [account.count >= perAccount ? account.resetMs : 0, client.count >= perAddress ? client.resetMs : 0]
      const waitMs = Math.max(...blocked)
      if (account.count < perAccount && client.count < perAddress) return
      const seconds = Math.max(1, Math.ceil(waitMs / 1000))
      throw new AppError('RATE_LIMITED', `too many failed logins; retry in ${seconds} seconds`, { headers: { 'retry-after': String(seconds) } })
    },
    recordFailure: async (email: string, address: string) => {
      await Promise.all([tolerant(() => store.hit(accountKey(email), windowMs), undefined), tolerant(() => store.hit(addressKey(address), windowMs), undefined)])
    },
    clear: async (email: string) => {
      await tolerant(() => store.clear(accountKey(email)), undefined)
    },
  })
}

export default fp(loginLimitPlugin, { name: 'login-limit', dependencies: ['redis'] })
