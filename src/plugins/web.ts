// The web UI: the Vite build in dist/web (scripts/build-web.mjs, run by postinstall) served at
// `/`. Hashed assets under /assets/ are cached for a year; the app's own routes (/, /login,
// /invite, /c/…, /dm/…, /settings…, /search, /mentions) answer index.html so a reload or a shared link
// opens the right screen. Everything else keeps its meaning: /api, /ws, /docs, /health and
// /openapi.json are other plugins' routes, and an unknown path, /api/… included, still gets the
// 404 {error, code} of the not-found handler.
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

/** Paths of the single-page app; each answers index.html. */
export const APP_ROUTES = ['/', '/login', '/invite', '/search', '/mentions', '/settings', '/settings/*', '/c/*', '/dm/*']

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
