// The Redis read loop must not keep what it has read: each XREAD reply is garbage once its
// events are delivered (a Promise.race against one long-lived stop promise used to keep every
// reply reachable until shutdown, about 1 KB per event).
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import t from 'tap'
import { needsRedis } from '../setup/services.ts'
import { build } from '../helper.ts'
import { createChannelId, post, seedWorkspace } from '../support/index.ts'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

t.test('Redis: the replies the read loop has delivered can be collected', { skip: needsRedis() }, async (t) => {
  const { app, api } = await build(t, { redis: true })
  const ws = await seedWorkspace(app)
  const channel = await createChannelId(api, ws.primary.key, 'reader')

  // Watch the replies of the loop's next reads (the read in progress started before this).
  const reader = (app.realtime.broker as unknown as { reader: { xread: (...args: unknown[]) => Promise<unknown> } }).reader
  const xread = reader.xread.bind(reader)
  const replies: WeakRef<object>[] = []
  reader.xread = (...args: unknown[]) => {
    const reply = xread(...args)
    reply.then(
      (r) => r && replies.push(new WeakRef(r)),
      () => {},
    )
    return reply
  }
  const delivered: string[] = []
  app.realtime.broker.onEntries((entries) => delivered.push(...entries.map((e) => e.event.id)))

  for (let i = 0; i < 5; i++) {
    const before = replies.length
    await post(api, ws.primary.key, channel, `read ${i}`)
    for (let n = 0; n < 500 && replies.length === before; n++) await new Promise((resolve) => setTimeout(resolve, 10))
  }
  t.ok(replies.length >= 3, `the loop read ${replies.length} replies`)
  t.ok(delivered.length >= 5, 'the events were delivered')
  // Let the loop move on to its next blocking read, then collect.
  await new Promise((resolve) => setTimeout(resolve, 50))
  for (let i = 0; i < 3; i++) gc()
  const kept = replies.slice(0, -1).filter((ref) => ref.deref() !== undefined).length
  t.equal(kept, 0, 'no delivered reply is still reachable')
})
