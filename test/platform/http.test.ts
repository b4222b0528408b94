// HTTP edges every route shares: how bodies are read and what a request gets while the server
// shuts down. Errors keep the {error, code} format in every case.
import { once } from 'node:events'
import net from 'node:net'
import t from 'tap'
import { build } from '../helper.ts'
import { bearer, seedWorkspace } from '../support/index.ts'

const json = { 'content-type': 'application/json' }

t.test('an empty body with Content-Type: application/json is no body, not invalid JSON', async (t) => {
  const { app, api } = await build(t)
  const ws = await seedWorkspace(app)
  const agent = ws.agents[0]!
  // Many clients send the JSON content type on every request, DELETE included.
  const revoke = await api({ method: 'DELETE', url: `/api/v1/agents/${agent.id}/keys/${agent.keyId}`, headers: { ...bearer(ws.owner.token), ...json }, payload: '' })
  t.equal(revoke.statusCode, 204)
  const after = await api({ method: 'GET', url: '/api/v1/agents/me', headers: bearer(agent.key) })
  t.equal(after.statusCode, 401, 'the key was revoked')

  const blank = await api({ method: 'DELETE', url: `/api/v1/agents/${ws.agents[1]!.id}`, headers: { ...bearer(ws.owner.token), ...json }, payload: '  \n' })
  t.equal(blank.statusCode, 204, 'whitespace only counts as empty')

  // A route that needs a body still says so.
  const missing = await api({ method: 'POST', url: '/api/v1/channels', headers: { ...bearer(ws.primary.key), ...json }, payload: '' })
  t.equal(missing.statusCode, 400)
  t.equal(missing.json().code, 'VALIDATION_ERROR')
  const broken = await api({ method: 'POST', url: '/api/v1/channels', headers: { ...bearer(ws.primary.key), ...json }, payload: '{"name":' })
  t.equal(broken.statusCode, 400)
  t.equal(broken.json().code, 'INVALID_JSON')
  const poisoned = await api({ method: 'POST', url: '/api/v1/channels', headers: { ...bearer(ws.primary.key), ...json }, payload: '{"name":"x","__proto__":{"admin":true}}' })
  t.equal(poisoned.statusCode, 400, 'prototype poisoning is still refused')
  t.equal(await app.db.prisma.channel.count(), 0, 'nothing was created')
})

/**
 * A connection in the middle of a request: a POST whose body is half sent, already answered 401
 * (the credential is checked before the body is read). Waits for the answer, not for time.
 */
async function halfSentPost(port: number): Promise<{ socket: net.Socket; received: () => string }> {
  const socket = net.connect(port, '127.0.0.1')
  await once(socket, 'connect')
  let received = ''
  socket.on('data', (chunk: Buffer) => (received += chunk.toString()))
  socket.write('POST /api/v1/channels HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 15\r\n\r\n{"name":')
  while (!received.includes('\r\n\r\n{')) await new Promise((resolve) => setTimeout(resolve, 5))
  return { socket, received: () => received }
}

t.test('a request that arrives on a kept-alive connection while the server shuts down is served, with Connection: close', async (t) => {
  const { app } = await build(t)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as net.AddressInfo
  // A connection busy with a request (its body still coming) is not closed at once; a second
  // request pipelined behind it arrives after the shutdown began (waited for, not timed: a fixed
  // 100 ms was not enough on a loaded machine).
  const { socket, received } = await halfSentPost(port)
  const ended = once(socket, 'close')
  const closed = app.close()
  while (app.shutdown.startedAt === null) await new Promise((resolve) => setTimeout(resolve, 5))
  socket.write('"held"}GET /api/v1/channels HTTP/1.1\r\nHost: x\r\n\r\n')
  await ended
  await closed
  const responses = received().split(/(?=HTTP\/1\.1 )/)
  t.equal(responses.length, 2, 'two responses on the connection, then a clean close')
  t.match(responses[0], /^HTTP\/1\.1 401 /, 'the request in flight finished normally (no credential: 401)')
  t.match(responses[1], /^HTTP\/1\.1 401 /, 'the pipelined request was served too, not refused')
  t.match(responses[1], /connection: close/i)
  t.same(JSON.parse(responses[1]!.slice(responses[1]!.indexOf('\r\n\r\n') + 4)), {
    error: 'missing or invalid credentials',
    code: 'UNAUTHORIZED',
  })
})

t.test('a connection that never sent a request does not hold up the stop: it is closed with the idle ones', async (t) => {
  const { app } = await build(t)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as net.AddressInfo
  // A client's pool opened it and had nothing to send. Node counts it as busy until its headers
  // timeout (60 s), so a close that left it to Node waited that long.
  const silent = net.connect(port, '127.0.0.1')
  await once(silent, 'connect')
  const silentClosed = once(silent, 'close')
  // Beside it, one that is still sending its request: the stop waits for it and answers it.
  const { socket: sending, received } = await halfSentPost(port)

  let stopped = false
  const closing = app.close().then(() => (stopped = true))
  await silentClosed
  t.notOk(stopped, 'the silent connection is closed by the stop, which goes on waiting for the busy one')
  sending.end('"held"}')
  await closing
  t.ok(stopped, 'the stop is over once the busy connection is done')
  t.match(received(), /^HTTP\/1\.1 401 /, 'the request that was being sent got its answer')
})
