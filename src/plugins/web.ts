// The web UI: the Vite build in dist/web (scripts/build-web.mjs, run by postinstall) served at
// `/`. Hashed assets under /assets/ are cached for a year (immutable) and sent precompressed
// (Brotli or gzip, made at build time, by the client's Accept-Encoding); the app's own routes
// (APP_ROUTES) answer index.html (no-cache) so a reload or a shared link opens the right screen.
// Everything else keeps its meaning: /api, /ws, /docs, /health and /openapi.json are other
// plugins' routes; an unknown path under /api gets the 404 {error, code} of the not-found
// handler, any other unknown page an HTML 404 page (NOT_FOUND_PAGE).
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { FastifyInstance, FastifyReply } from 'fastify'
import fastifyStatic from '@fastify/static'

const here = path.dirname(fileURLToPath(import.meta.url))

/** Where the build is: dist/web from the sources (src/plugins) or from a compiled dist/src/plugins. */
export function webBuildDir(): string | null {
  const candidates = [path.resolve(here, '..', '..', 'dist', 'web'), path.resolve(here, '..', '..', 'web')]
  return candidates.find((dir) => existsSync(path.join(dir, 'index.html'))) ?? null
}

/**
 * Paths of the single-page app; each answers index.html. A screen the UI adds must be listed here,
 * or a reload of it shows the 404 page.
 */
export const APP_ROUTES = ['/', '/login', '/signup', '/invite', '/profile', '/browse', '/search', '/mentions', '/decisions', '/settings', '/settings/*', '/c/*', '/dm/*']

/** Whether an unknown path gets the HTML 404 page (a page a person asked for) rather than JSON. */
export function wantsPage(method: string, url: string): boolean {
  const pathname = url.split('?')[0]!
  return (method === 'GET' || method === 'HEAD') && pathname !== '/api' && !pathname.startsWith('/api/')
}

export const NOT_FOUND_PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Page not found · Agent Messaging Service</title>
<style>body{font:16px/1.5 system-ui,sans-serif;margin:0;display:grid;place-items:center;min-height:100vh;background:#f7f7f8;color:#1f2328}
main{max-width:32rem;padding:2rem}h1{font-size:1.5rem;margin:0 0 .5rem}a{color:#0b57d0}</style></head>
<body><main><h1>Page not found</h1><p>There is nothing at this address. It may have moved, or the link may be mistyped.</p>
<p><a href="/">Go to your conversations</a></p></main></body></html>`

const NOT_BUILT = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Agent Messaging Service</title></head>
<body><main><h1>The web UI is not built</h1><p>Run <code>npm run web:build</code> (it needs the dev dependencies), then reload.
The API is at <a href="/docs">/docs</a>.</p></main></body></html>`

async function webPlugin(app: FastifyInstance): Promise<void> {
  const dir = webBuildDir()
  if (dir) {
    await app.register(fastifyStatic, {
      root: path.join(dir, 'assets'),
      prefix: '/assets/',
      index: false,
      decorateReply: false,
      immutable: true,
      maxAge: '365d',
      // The .br and .gz files written by scripts/build-web.mjs, by Accept-Encoding (Vary set).
      preCompressed: true,
      schemaHide: true,
    })
  }
  // Read per request (a small file the OS keeps cached), so a rebuild needs no restart.
  const sendIndex = async (_request: unknown, reply: FastifyReply) =>
    reply
      .header('cache-control', 'no-cache')
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .type('text/html; charset=utf-8')
      .send(dir ? await readFile(path.join(dir, 'index.html'), 'utf8').catch(() => NOT_BUILT) : NOT_BUILT)
  for (const url of APP_ROUTES) {
    app.get(url, { schema: { hide: true }, config: { auth: 'public' } }, sendIndex)
  }
}

export default webPlugin
