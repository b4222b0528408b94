#!/usr/bin/env node
// Builds the web UI (src/web → dist/web) with Vite after a type check of its sources. Run by
// `postinstall`, so `npm ci && npm start` serves the UI with no extra step; `npm run web:build`
// runs it again after a change. An install without the dev dependencies (a production image that
// copies a build made earlier) has no Vite: it says so in one line and leaves the build alone.
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { gzipSync } from 'node:zlib'
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

// Budget: the JavaScript the first page load fetches (the scripts index.html names), gzipped.
const BUDGET = 250 * 1024
const out = path.join(root, 'dist', 'web')
const index = readFileSync(path.join(out, 'index.html'), 'utf8')
const scripts = [...index.matchAll(/<(?:script|link)[^>]+(?:src|href)="\/assets\/([^"]+\.js)"/g)].map((m) => m[1])
const initial = scripts.reduce((sum, file) => sum + gzipSync(readFileSync(path.join(out, 'assets', file)), { level: 9 }).length, 0)
const files = readdirSync(path.join(out, 'assets')).length
console.log(`web UI built in dist/web: ${files} assets; initial JavaScript ${(initial / 1024).toFixed(1)} KB gzipped (budget ${BUDGET / 1024} KB)`)
if (initial > BUDGET) {
  console.error('initial JavaScript is over its budget')
  process.exit(1)
}
