// SIGTERM to a real server process under load (16 closed-loop posters on kept-alive connections,
// an agent webhook and an integration, both receivers slow enough that deliveries queue up):
// - no post loses its connection without an answer: each is answered (201) or, once the server
//   stopped listening, its new connection is refused;
// - the process exits 0 and leaves no delivery under its lease: what it had claimed and not
//   attempted was handed back (due now);
// - after a restart every stored message reaches both receivers within 30 s (the lease is 60 s
//   here, so a delivery left under it could not). Two instances: graceful-stop-cluster.test.ts.
import t from 'tap'
import { freePort, startServer } from '../processes.ts'
import { checkOutcomes, DELIVERED_WITHIN_MS, deliveredWithin, deliveryStates, leased, scene, stopUnderLoad, storedIds } from './stop-load.ts'

t.test('SIGTERM under load, then a restart', async (t) => {
  const s = await scene(t, false)
  const first = await startServer(t, s.env(await freePort()))
  const outcomes = await stopUnderLoad(t, s, first)
  t.equal(await leased(s.app), 0, 'no delivery is left under a lease')
  checkOutcomes(t, outcomes)

  const stored = await storedIds(s.app, s.channelId)
  t.same(
    outcomes.filter((o) => (o.status === 201) !== stored.has(o.text)),
    [],
    'every post answered 201 is stored, and no other',
  )

  s.fast.value = true
  const second = await startServer(t, s.env(await freePort()))
  const missing = await deliveredWithin(s, [...stored.values()], DELIVERED_WITHIN_MS)
  t.same(missing, { webhook: [], integration: [] }, `after the restart every stored message (${stored.size}) reached both receivers within ${DELIVERED_WITHIN_MS / 1000} s`, {
    deliveries: await deliveryStates(s.app, missing),
    log: second.output().slice(-4000),
  })
})
