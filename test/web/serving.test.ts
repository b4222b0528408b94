// The web UI is served at `/` with history fallback for the app's own routes, while the API,
// the documentation and unknown paths keep their answers.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { build } from '../helper.ts'
import { webBuildDir } from '../../src/plugins/web.ts'

t.test('app routes answer the single-page app; everything else keeps its meaning', async (t) => {
  const { app } = await build(t)
  for (const url of [
    '/',
    '/login',
    '/signup',
    '/profile',
    '/browse',
    '/invite?token=inv_a%2Bb%2Fc%3D',
    '/invite?token=inv_a+b/c=',
    '/c/0199a1b2-0000-7000-8000-000000000000',
    '/settings',
    '/settings/agents',
  ]) {
    const res = await app.inject({ method: 'GET', url })
    t.equal(res.statusCode, 200, url)
    t.match(res.headers['content-type'], /^text\/html/, url)
    t.match(res.body, /<div id="root"><\/div>|The web UI is not built/, url)
    t.equal(res.headers['referrer-policy'], 'no-referrer', `${url}: the invite token never leaks in a Referer`)
  }
  for (const url of ['/api/v1/nope', '/api/v1/channels/x/y/z', '/api', '/api/nope']) {
    const res = await app.inject({ method: 'GET', url })
    t.equal(res.statusCode, 404, url)
    t.same(Object.keys(res.json()).sort(), ['code', 'error'], `${url}: API paths keep the JSON 404`)
    t.equal(res.json().code, 'NOT_FOUND', url)
  }
  const posted = await app.inject({ method: 'POST', url: '/nope', payload: {} })
  t.same([posted.statusCode, posted.json().code], [404, 'NOT_FOUND'], 'only a page request (GET, HEAD) gets the page')
  const health = await app.inject({ method: 'GET', url: '/health' })
  t.match(health.headers['content-type'], /application\/json/)
  const doc = await app.inject({ method: 'GET', url: '/openapi.json' })
  t.equal(doc.statusCode, 200)
  t.notOk(
    Object.keys(doc.json().paths).some((p: string) => !p.startsWith('/api/') && p !== '/health' && p !== '/health/ready'),
    'UI routes stay out of the API document',
  )
  const unauth = await app.inject({ method: 'GET', url: '/api/v1/channels' })
  t.equal(unauth.statusCode, 401)
})

t.test('built assets are served with long caching', { skip: webBuildDir() ? false : 'web UI not built (npm run web:build)' }, async (t) => {
  const { app } = await build(t)
  const dir = path.join(webBuildDir()!, 'assets')
  // The entry script (index.html names it; lazily loaded chunks such as the settings are not named).
  const js = existsSync(dir) ? readdirSync(dir).find((f) => f.startsWith('index-') && f.endsWith('.js')) : undefined
  t.ok(js, 'the build has a script')
  const index = await app.inject({ method: 'GET', url: '/' })
  t.match(index.body, `/assets/${js}`)
  t.match(index.headers['cache-control'], 'no-cache')
  const res = await app.inject({ method: 'GET', url: `/assets/${js}` })
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /javascript/)
  t.match(res.headers['cache-control'], /immutable/)
})

t.test('an unknown page outside /api is an HTML 404 page, not JSON', async (t) => {
  const { app } = await build(t)
  for (const url of ['/nope', '/c', '/signup/extra', '/assets/missing.js', '/nope?x=1']) {
    const res = await app.inject({ method: 'GET', url, headers: { accept: 'text/html' } })
    t.equal(res.statusCode, 404, url)
    t.match(res.headers['content-type'], /^text\/html; charset=utf-8/, url)
    t.match(res.body, /<title>Page not found/, url)
    t.match(res.body, /<a href="\/">/, `${url}: a way back`)
    t.equal(res.headers['cache-control'], 'no-cache')
  }
  const head = await app.inject({ method: 'HEAD', url: '/nope' })
  t.equal(head.statusCode, 404)
  t.match(head.headers['content-type'], /^text\/html/)
})

t.test('the sign-up page is served while registration is open (the SPA decides what to show otherwise)', async (t) => {
  const { app, api } = await build(t)
  const { seedWorkspace, bearer } = await import('../support/index.ts')
  const ws = await seedWorkspace(app)
  const open = await api({ method: 'PATCH', url: '/api/v1/workspace', headers: bearer(ws.owner.token), payload: { registration_mode: 'open' } })
  t.equal(open.statusCode, 200, open.body)
  const page = await app.inject({ method: 'GET', url: '/signup' })
  t.equal(page.statusCode, 200)
  t.match(page.headers['content-type'], /^text\/html/)
  t.equal(page.headers['cache-control'], 'no-cache')
  const registered = await api({ method: 'POST', url: '/api/v1/auth/register', payload: { email: 'new@example.com', password: 'a long enough password', display_name: 'New' } })
  t.equal(registered.statusCode, 201, 'and the API it posts to accepts the account')
})

t.test('assets are sent precompressed by Accept-Encoding, cached a year as immutable', { skip: webBuildDir() ? false : 'web UI not built (npm run web:build)' }, async (t) => {
  const { app } = await build(t)
  const dir = path.join(webBuildDir()!, 'assets')
  const assets = readdirSync(dir).filter((f) => /\.(?:js|css)$/.test(f))
  t.ok(assets.length >= 2, 'a script and a stylesheet')
  for (const file of assets) {
    t.ok(existsSync(path.join(dir, `${file}.br`)) && existsSync(path.join(dir, `${file}.gz`)), `${file}: .br and .gz made at build time`)
    const cases: [string | undefined, string | undefined, string][] = [
      ['br, gzip, deflate', 'br', `${file}.br`],
      ['gzip, deflate', 'gzip', `${file}.gz`],
      [undefined, undefined, file],
    ]
    for (const [accept, encoding, sent] of cases) {
      const res = await app.inject({ method: 'GET', url: `/assets/${file}`, headers: accept ? { 'accept-encoding': accept } : {} })
      t.equal(res.statusCode, 200, `${file} ${accept}`)
      t.equal(res.headers['content-encoding'], encoding, `${file} with ${accept ?? 'no Accept-Encoding'}`)
      t.equal(res.rawPayload.length, readFileSync(path.join(dir, sent)).length, `${file}: the bytes of ${sent}`)
      t.equal(res.headers['cache-control'], 'public, max-age=31536000, immutable')
      t.match(res.headers['content-type'], file.endsWith('.js') ? /javascript/ : /text\/css/)
      if (accept) t.match(res.headers.vary, /accept-encoding/i)
    }
  }
  const index = await app.inject({ method: 'GET', url: '/', headers: { 'accept-encoding': 'br' } })
  t.equal(index.headers['cache-control'], 'no-cache', 'index.html is checked on every visit')
})
