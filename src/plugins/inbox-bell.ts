// The inbox's bell (src/modules/inbox/bell.ts) as a plugin: rung in the process, or across
// instances over one Redis pub/sub channel.
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { Redis } from 'ioredis'
import { Ear, type InboxBell } from '../modules/inbox/bell.ts'
import { subscribeWhenReady } from './redis.ts'

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
