// docs/operations.md documents every configuration variable src/config.ts reads (as the README
// does), and the Dockerfile keeps the properties docs and compose rely on.
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

t.test('docs/operations.md has a row for every configuration variable', async (t) => {
  const doc = await readFile(path.join(root, 'docs/operations.md'), 'utf8')
  const config = await readFile(path.join(root, 'src/config.ts'), 'utf8')
  const start = config.indexOf('const EnvSchema')
  const schema = config.slice(start, config.indexOf('\n})', start))
  const variables = [...schema.matchAll(/^\s+([A-Z][A-Z0-9_]+):\s*Type\./gm)].map((m) => m[1]!)
  t.ok(variables.length >= 20, `found ${variables.length} variables in src/config.ts`)
  const documented = new Set([...doc.matchAll(/^\|\s*`([A-Z][A-Z0-9_]+)`\s*\|/gm)].map((m) => m[1]!))
  t.same(
    variables.filter((v) => !documented.has(v)),
    [],
    'every variable has a row',
  )
  t.same(
    [...documented].filter((v) => !variables.includes(v)),
    [],
    'no row for a variable that does not exist',
  )
})

t.test('Dockerfile: no syntax line, unprivileged, exec-form command, readiness health check, data volume', async (t) => {
  const dockerfile = await readFile(path.join(root, 'Dockerfile'), 'utf8')
  t.notMatch(dockerfile, /^#\s*syntax\s*=/im, 'no `# syntax=` line (it makes BuildKit fetch a frontend image)')
  const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '))
  t.match(runtime, /^USER node$/m)
  t.match(runtime, /^CMD \[.*"dist\/server\.js"\]$/m, 'exec form, the compiled server')
  t.match(runtime, /^HEALTHCHECK [\s\S]*\/health\/ready/m)
  t.match(runtime, /^VOLUME \["\/data"\]$/m)
  t.notMatch(runtime, /COPY --from=build \/app\/(src|test|scripts)\b/, 'no sources, tests or scripts at run time')
})
