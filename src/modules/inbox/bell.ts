// The inbox's bell: wakes the requests waiting for a member's inbox (GET /api/v1/inbox?wait=, MCP
// wait_for_inbox) when the delivery planner has committed new items for that member, on whichever
// instance planned them: with Redis the ring crosses instances over one pub/sub channel, without
// it stays in the process. A ring that is lost (Redis reconnecting) costs latency, not items: a
// waiting request reads the inbox again at its deadline.
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { Redis } from 'ioredis'
import { subscribeWhenReady } from '../../plugins/redis.ts'

/** A waiting request's ear on one member's bell, armed before its first read. */
export class Ear {
  private rang = false
  private wakeUp: (() => void) | null = null

  constructor(readonly memberId: string) {}

  ring(): void {
    this.rang = true
    this.wakeUp?.()
  }

  /** Resolves true once the bell rang since the last call (at once if it did), false after `ms` or on abort. */
  until(ms: number, signal: AbortSignal): Promise<boolean> {
    if (this.rang) {
      this.rang = false
      return Promise.resolve(true)
    }
    if (signal.aborted || ms <= 0) return Promise.resolve(false)
    return new Promise((resolve) => {
      const done = (rang: boolean): void => {
        clearTimeout(timer)
        signal.removeEventListener('abort', onAbort)
        this.wakeUp = null
        if (rang) this.rang = false
        resolve(rang)
      }
      const onAbort = (): void => done(false)
      const timer = setTimeout(() => done(false), ms)
      signal.addEventListener('abort', onAbort, { once: true })
      this.wakeUp = () => done(true)
    })
  }
}

export interface InboxBell {
  /** New items were committed for these members. */
  ring(memberIds: string[]): void
  /** Listens for the member's bell until `disarm`. */
  arm(memberId: string): Ear
  disarm(ear: Ear): void
  /** Requests waiting on this instance. */
  readonly waiting: number
}

declare module 'fastify' {
  interface FastifyInstance {
    inboxBell: InboxBell
  }
}

async function inboxBellPlugin(app: FastifyInstance): Promise<void> {
  const ears = new Map<string, Set<Ear>>()
  const channel = `${app.redisPrefix}inbox`
  let subscriber: Redis | null = null
  let count = 0

  const heard = (memberIds: string[]): void => {
    for (const id of memberIds) for (const ear of ears.get(id) ?? []) ear.ring()
  }

  function ring(memberIds: string[]): void {
    if (!app.redis) return heard(memberIds)
    app.redis.publish(channel, JSON.stringify(memberIds)).catch((error: unknown) => app.log.warn({ err: error }, 'could not ring the inbox bell'))
  }

  function arm(memberId: string): Ear {
    const ear = new Ear(memberId)
    let set = ears.get(memberId)
    if (!set) ears.set(memberId, (set = new Set()))
    set.add(ear)
    count += 1
    return ear
  }

  function disarm(ear: Ear): void {
    const set = ears.get(ear.memberId)
    if (!set?.delete(ear)) return
    count -= 1
    if (!set.size) ears.delete(ear.memberId)
  }

  if (app.redis && app.background) {
    app.addHook('onReady', async () => {
      const sub = app.redisDuplicate()
      subscriber = sub
      sub.on('message', (_channel: string, raw: string) => {
        try {
          const ids = JSON.parse(raw) as unknown
          if (Array.isArray(ids)) heard(ids.filter((id): id is string => typeof id === 'string'))
        } catch {
          // not ours
        }
      })
      await subscribeWhenReady(sub, channel, (error) => app.log.warn({ err: error }, 'could not subscribe to the inbox bell'))
    })
  }
  app.addHook('onClose', async () => {
    const sub = subscriber
    subscriber = null
    if (sub) await sub.quit().catch(() => sub.disconnect())
  })

  app.decorate('inboxBell', {
    ring,
    arm,
    disarm,
    get waiting() {
      return count
    },
  })
}

export default fp(inboxBellPlugin, { name: 'inbox-bell', dependencies: ['redis'] })
