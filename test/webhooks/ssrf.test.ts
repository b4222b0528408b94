// The SSRF guard on its own: address classification, URL checks at registration, and the
// connection-time lookup that refuses a name resolving to a forbidden address (DNS rebinding).
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { checkTargetUrl, isAllowedAddress, isForbiddenAddress, parseTargetUrl, safeLookup, UnsafeUrlError } from '../../src/lib/ssrf.ts'

const strict = { allowPrivate: false, allowHosts: [] }

t.test('forbidden and allowed addresses', async (t) => {
  for (const ip of [
    '127.0.0.1',
    '127.8.9.10',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '0.0.0.0',
    '100.64.0.1',
    '224.0.0.1',
    '255.255.255.255',
    '::1',
    '::',
    'fe80::1',
    'fd00::1',
    'fc00::abcd',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:10.0.0.1',
    '::127.0.0.1',
    '64:ff9b::a9fe:a9fe',
    'ff02::1',
    '2001:db8::1',
    'not-an-ip',
  ]) {
    t.ok(isForbiddenAddress(ip), `${ip} is forbidden`)
  }
  for (const ip of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808']) {
    t.notOk(isForbiddenAddress(ip), `${ip} is public`)
  }
  t.ok(isAllowedAddress({ allowPrivate: true, allowHosts: [] }, 'x', '127.0.0.1'), 'WEBHOOK_ALLOW_PRIVATE allows everything')
  const list = { allowPrivate: false, allowHosts: ['10.0.0.0/8', 'hooks.internal', '::1'] }
  t.ok(isAllowedAddress(list, 'a.example', '10.2.3.4'), 'CIDR allow-list')
  t.ok(isAllowedAddress(list, 'HOOKS.internal', '192.168.0.1'), 'host allow-list, case-insensitive')
  t.ok(isAllowedAddress(list, 'x', '::1'), 'single IPv6 address')
  t.notOk(isAllowedAddress(list, 'x', '192.168.0.1'))
})

t.test('registration-time URL checks', async (t) => {
  for (const [url, reason] of [
    ['ftp://example.com/x', /only http and https/],
    ['file:///etc/passwd', /only http and https/],
    ['not a url', /not a valid absolute URL/],
    ['http://user:pw@example.com/', /credentials/],
    ['http://127.0.0.1:8080/', /127\.0\.0\.1 is private/],
    ['http://[::1]/', /::1 is private/],
    ['http://169.254.169.254/latest/meta-data', /169\.254\.169\.254/],
    ['http://0.0.0.0/', /0\.0\.0\.0/],
    ['http://2130706433/', /127\.0\.0\.1/], // decimal form of 127.0.0.1, normalised by the URL parser
    ['http://0x7f.1/', /127\.0\.0\.1/],
    ['http://localhost:3000/', /not a public name/],
    ['http://metadata.google.internal/', /not a public name/],
    ['http://intranet/', /not a public name/],
    [`https://example.com/${'a'.repeat(2100)}`, /longer than 2048/],
  ] as const) {
    t.throws(() => parseTargetUrl(url, strict), { name: 'UnsafeUrlError', message: reason }, url.slice(0, 60))
  }
  t.equal(parseTargetUrl('https://hooks.example.com/x?y=1', strict).hostname, 'hooks.example.com')
  t.equal(parseTargetUrl('http://127.0.0.1:9/', { allowPrivate: true, allowHosts: [] }).port, '9')
  t.equal(parseTargetUrl('http://localhost:9/', { allowPrivate: false, allowHosts: ['localhost'] }).hostname, 'localhost')
  t.equal(parseTargetUrl('http://127.0.0.1:9/', { allowPrivate: false, allowHosts: ['127.0.0.0/8'] }).hostname, '127.0.0.1')
  // A name that does not resolve here is accepted (it is checked again at every connection).
  t.equal((await checkTargetUrl('https://does-not-resolve.invalid/hook', strict)).hostname, 'does-not-resolve.invalid')
  await t.rejects(checkTargetUrl('http://[fd00::1]/', strict), UnsafeUrlError)
})

t.test('the connection-time lookup refuses a name that resolves to a forbidden address', async (t) => {
  let hits = 0
  const server = http.createServer((_req, res) => {
    hits++
    res.end('ok')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  const { port } = server.address() as AddressInfo

  const get = (policy: { allowPrivate: boolean; allowHosts: string[] }) =>
    new Promise<{ status?: number; code?: string }>((resolve) => {
      // `localhost` stands for any public-looking name whose DNS answer points inside.
      const req = http.get({ host: 'localhost', port, path: '/', agent: false, lookup: safeLookup(policy) }, (res) => {
        res.resume()
        resolve({ status: res.statusCode })
      })
      req.on('error', (error: NodeJS.ErrnoException) => resolve({ code: error.code }))
    })

  t.same(await get(strict), { code: 'ERR_UNSAFE_ADDRESS' })
  t.equal(hits, 0, 'nothing reached the private address')
  t.same(await get({ allowPrivate: false, allowHosts: ['127.0.0.1'] }), { status: 200 }, 'allowed by CIDR/IP allow-list')
  t.same(await get({ allowPrivate: true, allowHosts: [] }), { status: 200 }, 'allowed by WEBHOOK_ALLOW_PRIVATE')
  t.equal(hits, 2)
})
