// The key cache's lease (src/plugins/key-cache.ts) after its subscriber connection drops with a
// PING in flight: ioredis may drop that command without ever settling it (reconnecting within
// maxRetriesPerRequest, unfulfilled commands not resent). The lease must not wait for it: once
// subscribed again, the next PING renews it. Before the fix, the cache never trusted again.
import t from 'tap'
import type { Redis } from 'ioredis'
import { KeyCache } from '../../src/plugins/key-cache.ts'
import { eventually } from '../support/wait.ts'

t.test('a PING lost with its connection does not stop the lease', async (t) => {
  let hang = true
  let pings = 0
  const subscriber = {
    ping: () => {
      pings++
      return hang ? new Promise<string>(() => {}) : Promise.resolve('PONG')
    },
  } as unknown as Redis
  const cache = new KeyCache(60_000, subscriber)
  t.teardown(() => cache.stop())
  cache.setLive(true)
  await eventually(async () => pings > 0, 'a first PING')
  t.notOk(cache.trusted, 'no reply yet: not trusted')
  // The connection drops with that PING unanswered, then is subscribed again; later PINGs answer.
  cache.setLive(false)
  hang = false
  cache.setLive(true)
  await eventually(async () => cache.trusted, 'the lease renewed by a PING on the new subscription')
  t.ok(pings >= 2, `PINGs continued (${pings})`)
})
