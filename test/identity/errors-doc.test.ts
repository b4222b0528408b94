// docs/errors.md documents exactly the closed list of codes in src/lib/errors.ts, with the same
// HTTP status for each.
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { ERROR_CODES } from '../../src/lib/errors.ts'

const doc = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../docs/errors.md')

t.test('docs/errors.md lists exactly the codes of ERROR_CODES with their statuses', async (t) => {
  const text = await readFile(doc, 'utf8')
  const rows = [...text.matchAll(/^\|\s*`([A-Z0-9_]+)`\s*\|\s*(\d{3})\s*\|/gm)].map((m) => [m[1]!, Number(m[2])] as const)
  const documented = Object.fromEntries(rows)
  t.equal(rows.length, Object.keys(documented).length, 'no code documented twice')
  t.same(documented, { ...ERROR_CODES })
})
