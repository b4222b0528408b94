// The web UI is served at `/` with history fallback for the app's own routes, while the API,
// the documentation and unknown paths keep their answers.
import { existsSync, readdirSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { build } from '../helper.ts'
import { webBuildDir } from '../../src/plugins/web.ts'

t.test('app routes answer the single-page app; everything else keeps its meaning', async (t) => {
  const { app } = await build(t)
  for (const url of ['/', '/login', '/invite?token=inv_a%2Bb%2Fc%3D', '/invite?token=inv_a+b/c=', '/c/0199a1b2-0000-7000-8000-000000000000', '/settings', '/settings/agents']) {
    const res = await app.inject({ method: 'GET', url })
    t.equal(res.statusCode, 200, url)
    t.match(res.headers['content-type'], /^text\/html/, url)
    t.match(res.body, /<div id="root"><\/div>|The web UI is not built/, url)
    t.equal(res.headers['referrer-policy'], 'no-referrer', `${url}: the invite token never leaks in a Referer`)
  }
  for (const url of ['/api/v1/nope', '/api/v1/channels/x/y/z', '/nope', '/c', '/assets/missing.js']) {
    const res = await app.inject({ method: 'GET', url })
    t.equal(res.statusCode, 404, url)
    t.same(Object.keys(res.json()).sort(), ['code', 'error'], url)
    t.equal(res.json().code, 'NOT_FOUND', url)
  }
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
  const js = existsSync(dir) ? readdirSync(dir).find((f) => f.endsWith('.js')) : undefined
  t.ok(js, 'the build has a script')
  const index = await app.inject({ method: 'GET', url: '/' })
  t.match(index.body, `/assets/${js}`)
  t.match(index.headers['cache-control'], 'no-cache')
  const res = await app.inject({ method: 'GET', url: `/assets/${js}` })
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /javascript/)
  t.match(res.headers['cache-control'], /immutable/)
})
