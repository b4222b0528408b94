#!/usr/bin/env node
// Builds the web UI (src/web → dist/web) with Vite after a type check of its sources. Run by
// `postinstall`, so `npm ci && npm start` serves the UI with no extra step; `npm run web:build`
// runs it again after a change. An install without the dev dependencies (a production image that
// copies a build made earlier) has no Vite: it says so in one line and leaves the build alone.
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { brotliCompressSync, constants as zlibConstants, gzipSync } from 'node:zlib'
import { fileURLToPath } from 'node:url'
import path from 'node:path'

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)))
const vite = path.join(root, 'node_modules', 'vite', 'bin', 'vite.js')
const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc')
if (!existsSync(vite)) {
  console.log('web UI not built: Vite is not installed (dev dependencies omitted); the server serves dist/web if present')
  process.exit(0)
}
const run = (args) => spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' }).status ?? 1
if (!process.argv.includes('--skip-typecheck')) {
  const status = run([tsc, '-p', 'src/web/tsconfig.json'])
  if (status !== 0) process.exit(status)
}
const status = run([vite, 'build', '--config', 'src/web/vite.config.ts', '--logLevel', 'warn'])
if (status !== 0) process.exit(status)

// Precompression: every asset gets a .br and a .gz beside it, made once here at
// the highest levels (too slow per request); the server sends the one the client accepts
// (src/plugins/web.ts) with Content-Encoding, and the file itself to a client that accepts neither.
const out = path.join(root, 'dist', 'web')
const COMPRESSIBLE = /\.(?:js|mjs|css|html|svg|json|txt|map|wasm)$/
const sizes = new Map()
for (const file of readdirSync(path.join(out, 'assets')).map((f) => path.join('assets', f))) {
  if (!COMPRESSIBLE.test(file)) continue
  const full = path.join(out, file)
  const raw = readFileSync(full)
  const br = brotliCompressSync(raw, { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 11, [zlibConstants.BROTLI_PARAM_SIZE_HINT]: raw.length } })
  const gz = gzipSync(raw, { level: 9 })
  writeFileSync(`${full}.br`, br)
  writeFileSync(`${full}.gz`, gz)
  sizes.set(file, { raw: raw.length, br: br.length, gz: gz.length })
}

// Budget: the JavaScript and CSS the first page load fetches (what index.html names), as sent to
// a browser (Brotli; every current browser accepts it), and as sent with gzip only.
const BUDGET = 130 * 1024
const index = readFileSync(path.join(out, 'index.html'), 'utf8')
const initial = [...index.matchAll(/<(?:script|link)[^>]+(?:src|href)="\/assets\/([^"]+\.(?:js|css))"/g)].map((m) => path.join('assets', m[1]))
const sum = (key) => initial.reduce((total, file) => total + (sizes.get(file)?.[key] ?? 0), 0)
const kb = (n) => `${(n / 1024).toFixed(1)} KB`
const files = readdirSync(path.join(out, 'assets')).filter((f) => !/\.(?:br|gz)$/.test(f)).length
console.log(
  `web UI built in dist/web: ${files} assets, each precompressed (.br, .gz); first visit sends ${kb(sum('br'))} of JavaScript and CSS with Brotli (${kb(sum('gz'))} with gzip, ${kb(sum('raw'))} uncompressed; budget ${kb(BUDGET)})`,
)
if (sum('br') > BUDGET) {
  console.error('the first visit is over its budget')
  process.exit(1)
}
