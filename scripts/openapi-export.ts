// Writes openapi/openapi.json and openapi/openapi.yaml from the app itself. With --check it
// writes nothing and fails when the committed files differ from a fresh export (CI runs it).
import { readFile, writeFile, mkdir } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import YAML from 'yaml'
import { buildApp } from '../src/app.ts'
import { loadConfig } from '../src/config.ts'
import { asyncApiDocument } from '../src/realtime/asyncapi.ts'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const outDir = path.join(root, 'openapi')
const check = process.argv.includes('--check')

// The routes need no live database to describe themselves: nothing is queried.
const config = loadConfig({ LOG_LEVEL: 'silent', DATABASE_URL: 'postgresql://unused@127.0.0.1:1/unused' })
const app = await buildApp({ ...config, databaseUrl: config.databaseUrl!, jwtSecret: 'x'.repeat(32) }, { background: false })
await app.ready()
const document = app.swagger()
await app.close()

const json = `${JSON.stringify(document, null, 2)}\n`
const yaml = YAML.stringify(document, { aliasDuplicateObjects: false })
const files: [string, string][] = [
  [path.join(outDir, 'openapi.json'), json],
  [path.join(outDir, 'openapi.yaml'), yaml],
  // The WebSocket protocol, from the gateway's own frame schemas.
  [path.join(outDir, 'asyncapi.yaml'), YAML.stringify(asyncApiDocument(), { aliasDuplicateObjects: false })],
]

if (check) {
  const stale: string[] = []
  for (const [file, content] of files) {
    const committed = await readFile(file, 'utf8').catch(() => '')
    if (committed !== content) stale.push(path.relative(root, file))
  }
  if (stale.length) {
    console.error(`OpenAPI document is out of date: ${stale.join(', ')}. Run npm run openapi:export and commit the result.`)
    process.exit(1)
  }
  console.log('OpenAPI document is up to date.')
} else {
  await mkdir(outDir, { recursive: true })
  for (const [file, content] of files) await writeFile(file, content)
  console.log(`wrote ${files.map(([f]) => path.relative(root, f)).join(', ')}`)
}
