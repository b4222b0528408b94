// Real-time layer: the broker (in process, or a Redis stream when REDIS_URL is set), the outbox
// relay that feeds it, the hub that delivers to this instance's sockets, and the gateway at /ws.
import websocket from '@fastify/websocket'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { Batched } from '../lib/batched.ts'
import type { Broker } from './broker.ts'
import { gateway } from './gateway.ts'
import { encodeFrame, Hub } from './hub.ts'
import { Presence } from './presence.ts'
import { Signals } from './signals.ts'
import { MemoryBroker } from './memory-broker.ts'
import { RedisBroker } from './redis-broker.ts'
import { OutboxRelay } from './relay.ts'
import { liveChannelsOfMany } from './repo.ts'

declare module 'fastify' {
  interface FastifyInstance {
    realtime: { broker: Broker; hub: Hub; relay: OutboxRelay; signals: Signals; presence: Presence }
  }
}

async function realtimePlugin(app: FastifyInstance): Promise<void> {
  const { config } = app
  const broker: Broker = app.redis
    ? new RedisBroker(app.redis, app.redisDuplicate, app.redisPrefix, config.eventRetention, app.log, config.eventReadIntervalMs)
    : new MemoryBroker(config.eventRetention)
  const relay = new OutboxRelay(app.db.pool, broker, app.log, {
    sweepIntervalMs: config.outboxRelayIntervalMs,
    republishAfterMs: config.outboxRelayDelayMs,
    retentionMs: config.outboxRetentionMs,
    scanLagMs: config.outboxScanLagMs,
    fullScanMs: config.outboxFullScanMs,
  })
  // Sockets that open together load their channels together (src/lib/batched.ts).
  const liveChannels = new Batched<string, { channelIds: string[]; readsAllRegular: boolean }>((ids) => liveChannelsOfMany(app.db.pool, ids))
  const hub = new Hub((memberId) => liveChannels.call(memberId), app.log)
  broker.onEntries(hub.dispatch)
  // Typing, status and presence: ephemeral, beside the log (src/realtime/signals.ts).
  const signals = new Signals(
    (signal) => hub.deliverSignal(signal.channelIds, signal.except, encodeFrame(signal.frame), signal.sse === true),
    app.log,
    app.redis ? { publisher: app.redis, subscriber: () => app.redisDuplicate(), channel: `${app.redisPrefix}signals` } : null,
  )
  const presence = new Presence(app.redis, app.redisPrefix, config.wsPingIntervalMs * 3)
  app.decorate('realtime', { broker, hub, relay, signals, presence })

  // Every committed event goes to the broker at once; the sweeper catches what that misses.
  const unsubscribe = app.events.subscribe(relay.onCommitted)

  await app.register(websocket, {
    options: { maxPayload: config.wsMaxPayloadBytes },
    // The gateway closes its sockets itself (code 1001) in its own preClose hook.
    preClose: async () => {},
  })
  await gateway(app, { broker, hub, signals, presence })

  if (app.background) {
    app.addHook('onReady', async () => {
      await broker.start()
      await signals.start()
      relay.start()
    })
  }
  app.addHook('onClose', async () => {
    unsubscribe()
    await relay.stop()
    await broker.stop()
    await presence.clear()
    await signals.stop()
  })
}

export default fp(realtimePlugin, { name: 'realtime', dependencies: ['db', 'redis', 'auth'] })
