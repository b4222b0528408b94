// The README documents every configuration variable that src/config.ts reads, and starts with the
// two commands a newcomer needs.
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

t.test('README: the two commands first, and a row for every configuration variable', async (t) => {
  const readme = await readFile(path.join(root, 'README.md'), 'utf8')
  const config = await readFile(path.join(root, 'src/config.ts'), 'utf8')
  const start = config.indexOf('const EnvSchema')
  const schema = config.slice(start, config.indexOf('\n})', start))
  const variables = [...schema.matchAll(/^\s+([A-Z][A-Z0-9_]+):\s*Type\./gm)].map((m) => m[1]!)
  t.ok(variables.length >= 20, `found ${variables.length} variables in src/config.ts`)
  const documented = new Set([...readme.matchAll(/^\|\s*`([A-Z][A-Z0-9_]+)`\s*\|/gm)].map((m) => m[1]!))
  t.same(
    variables.filter((v) => !documented.has(v)),
    [],
    'every variable has a row in the configuration table',
  )
  t.same(
    [...documented].filter((v) => !variables.includes(v)),
    [],
    'no row for a variable that does not exist',
  )

  const firstBlock = readme.slice(readme.indexOf('```'), readme.indexOf('```', readme.indexOf('```') + 3))
  t.match(firstBlock, /^npm ci && npm start\b/m)
  t.match(firstBlock, /^npm ci && npm test\b/m)
})
