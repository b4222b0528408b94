// SIGTERM under load: every request sent on a kept-alive connection gets an HTTP answer (the
// response it was waiting for, or 503 with `Connection: close`), none finds its connection reset;
// the process exits 0. And a stopping instance hands its leased delivery stream entries back at
// once instead of leaving them to the claim timeout.
import http from 'node:http'
import t from 'tap'
import { build, testConfig } from '../helper.ts'
import { freePort, serverEnv, startServer } from '../processes.ts'
import { RedisQueue } from '../../src/workers/queue.ts'
import { bearer, seedWorkspace } from '../support/index.ts'

t.test('SIGTERM under load: answers or clean closes on every kept-alive connection', async (t) => {
  const config = await testConfig(t)
  const { app } = await build(t, { databaseUrl: config.databaseUrl, background: false })
  const ws = await seedWorkspace(app)
  const server = await startServer(t, serverEnv(config, await freePort()))

  const CLIENTS = 8
  const outcomes: { status?: number; code?: string; connection?: string; error?: string; reused: boolean }[] = []
  let stop = false
  const request = (agent: http.Agent): Promise<void> =>
    new Promise((resolve) => {
      const req = http.get(`${server.http}/api/v1/channels`, { agent, headers: bearer(ws.agents[0]!.key) }, (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8')
          outcomes.push({ status: res.statusCode, code: res.statusCode === 503 ? JSON.parse(body).code : undefined, connection: res.headers.connection, reused: req.reusedSocket })
          resolve()
        })
        res.on('error', (error: NodeJS.ErrnoException) => {
          outcomes.push({ error: error.code ?? error.message, reused: req.reusedSocket })
          resolve()
        })
      })
      req.on('error', (error: NodeJS.ErrnoException) => {
        outcomes.push({ error: error.code ?? error.message, reused: req.reusedSocket })
        resolve()
      })
    })
  const loops = Array.from({ length: CLIENTS }, async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
    while (!stop) {
      await request(agent)
      if (outcomes.at(-1)?.error === 'ECONNREFUSED') break // the port is closed: done
    }
    agent.destroy()
  })
  // Load first, then the signal.
  while (outcomes.filter((o) => o.status === 200).length < 50) await new Promise((resolve) => setTimeout(resolve, 10))
  server.proc.kill('SIGTERM')
  const code = await server.exited
  stop = true
  await Promise.all(loops)

  t.equal(code, 0, 'a clean exit')
  // A new connection made while the listener closes can be refused or reset by the kernel (the
  // accept queue is dropped with the listening socket); a client retries those like any refused
  // connection. A request on a kept-alive connection must get an answer.
  const reset = outcomes.filter((o) => o.error && o.reused)
  t.same(reset, [], 'no request on a kept-alive connection lost it without an answer (reset, hang-up)')
  if (reset.length) t.comment(JSON.stringify(outcomes.slice(-40)))
  const unavailable = outcomes.filter((o) => o.status === 503)
  for (const o of unavailable) t.match(o, { code: 'SERVICE_UNAVAILABLE', connection: 'close' })
  t.ok(outcomes.filter((o) => o.status === 200).length >= 50)
})

t.test('a stopping Redis queue hands back the entries it was handed but did not run', async (t) => {
  const { app } = await build(t, { redis: true, background: false })
  const redis = app.redis!
  const queue = new RedisQueue(redis, app.redisDuplicate, app.redisPrefix, 4, 600_000, app.log, () => {})
  const ran: string[] = []
  await queue.start(async (item) => {
    ran.push(item.id)
  })
  await queue.stop() // nothing read
  // start() creates the group, but tolerates failing to (its read loop creates it later); on a
  // loaded machine that first attempt can fail, so make sure it exists before reading as the group.
  await redis.xgroup('CREATE', queue.key, 'delivery-workers', '0', 'MKSTREAM').catch((error: Error) => {
    if (!error.message.includes('BUSYGROUP')) throw error
  })
  const items = [
    { id: '0193aaaa-0000-7000-8000-000000000001', attempts: 0, endpoint: '0193bbbb-0000-7000-8000-000000000001' },
    { id: '0193aaaa-0000-7000-8000-000000000002', attempts: 2, endpoint: '0193bbbb-0000-7000-8000-000000000001' },
  ]
  await queue.enqueue(items)
  // As if the stop had interrupted a read whose reply Redis had already sent: the entries are
  // pending with this consumer, never run.
  const read = await redis.xreadgroup('GROUP', 'delivery-workers', queue.consumer, 'COUNT', 10, 'STREAMS', queue.key, '>')
  t.ok(read, 'the entries were handed to this consumer')
  const handedBack = await queue.stop()
  t.same(handedBack, items, 'returned to be released in PostgreSQL at once')
  t.same(ran, [])
  const pending = (await redis.xpending(queue.key, 'delivery-workers')) as [number, ...unknown[]]
  t.equal(pending[0], 0, 'nothing left pending for the claim timeout')
  t.equal(await redis.xlen(queue.key), 0, 'and nothing left in the stream')
})
