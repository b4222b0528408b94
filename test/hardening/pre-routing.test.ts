// Issue 14, item 5: errors raised before routing (node's HTTP parser, the router, the body
// parser) answer {error, code} like every other error. Header limits are node's own, so they are
// exercised over a real socket (inject bypasses the HTTP parser).
import net from 'node:net'
import type { InjectOptions } from 'fastify'
import t, { type Test } from 'tap'
import { build } from '../helper.ts'

/** Sends raw bytes, returns the raw answer (status and body). */
function raw(port: number, bytes: string): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1')
    const chunks: Buffer[] = []
    socket.on('data', (c) => chunks.push(c))
    socket.on('error', () => {}) // the server resets after answering: the answer is what counts
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8')
      const [head = '', body = ''] = text.split('\r\n\r\n')
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0)
      if (!status) return reject(new Error(`no HTTP answer: ${JSON.stringify(text.slice(0, 200))}`))
      resolve({ status, headers: head, body })
    })
    socket.write(bytes)
  })
}

const shape = (t: Test, body: string, code: string, what: string) => {
  const parsed = JSON.parse(body)
  t.same(Object.keys(parsed).sort(), ['code', 'error'], `${what}: {error, code}`)
  t.equal(parsed.code, code, what)
}

t.test('over a real socket: 431 for a 20 KB header or URL, 400 for bytes that are not HTTP', async (t) => {
  const { app } = await build(t)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const port = (app.server.address() as net.AddressInfo).port

  const header = await raw(port, `GET /api/v1/agents HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`)
  t.equal(header.status, 431)
  t.match(header.headers, /content-type: application\/json/i)
  shape(t, header.body, 'HEADERS_TOO_LARGE', '20 KB header')

  const url = await raw(port, `GET /api/v1/agents?x=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`)
  t.equal(url.status, 431)
  shape(t, url.body, 'HEADERS_TOO_LARGE', '20 KB URL')

  const garbage = await raw(port, 'THIS IS NOT HTTP\r\n\r\n')
  t.equal(garbage.status, 400)
  shape(t, garbage.body, 'BAD_REQUEST', 'not HTTP')

  // the server keeps serving
  const ok = await fetch(`http://127.0.0.1:${port}/health`)
  t.equal(ok.status, 200)
})

t.test('router and parser errors: bad percent-encoding 400, long path segment 414, bad JSON 400, too large 413', async (t) => {
  const { app } = await build(t, { env: { BODY_LIMIT_BYTES: '1024' } })
  const cases: Array<[string, InjectOptions, number, string]> = [
    ['bad percent-encoding', { method: 'GET', url: '/api/v1/channels/%zz' }, 400, 'BAD_REQUEST'],
    ['path segment over the router limit', { method: 'GET', url: `/api/v1/channels/${'a'.repeat(500)}` }, 414, 'URI_TOO_LONG'],
    ['unparsable JSON', { method: 'POST', url: '/api/v1/auth/login', headers: { 'content-type': 'application/json' }, payload: '{"email":' }, 400, 'INVALID_JSON'],
    ['unparsable JSON to an unknown route', { method: 'POST', url: '/api/v1/nothing-here', headers: { 'content-type': 'application/json' }, payload: '{' }, 400, 'INVALID_JSON'],
    [
      'body over the limit',
      { method: 'POST', url: '/api/v1/auth/login', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ email: 'x'.repeat(2_000), password: 'y' }) },
      413,
      'PAYLOAD_TOO_LARGE',
    ],
  ]
  for (const [what, opts, status, code] of cases) {
    const res = await app.inject(opts)
    t.equal(res.statusCode, status, what)
    shape(t, res.body, code, what)
  }
})
