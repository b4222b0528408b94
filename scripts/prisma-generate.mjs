#!/usr/bin/env node
// Runs `prisma generate` without network access. Prisma's CLI wants a native schema-engine binary
// before any command and downloads it when missing; `generate` never runs it, so pointing
// PRISMA_SCHEMA_ENGINE_BINARY at an existing placeholder skips the download.
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import path from 'node:path'

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)))
const cli = path.join(root, 'node_modules', 'prisma', 'build', 'index.js')
if (!existsSync(cli)) {
  // The Prisma CLI is a dev dependency: a production install (`npm ci --omit=dev`, `npm prune
  // --omit=dev` in the Dockerfile) has none and runs the client generated at build time.
  console.error('prisma CLI not installed (production install): skipping prisma generate')
  process.exit(0)
}
const env = { ...process.env, PRISMA_HIDE_UPDATE_MESSAGE: '1', CHECKPOINT_DISABLE: '1' }
if (!env.PRISMA_SCHEMA_ENGINE_BINARY) env.PRISMA_SCHEMA_ENGINE_BINARY = path.join(root, 'scripts', 'schema-engine-placeholder.sh')
const result = spawnSync(process.execPath, [cli, 'generate'], { cwd: root, env, stdio: 'inherit' })
process.exit(result.status ?? 1)
