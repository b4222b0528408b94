// Every test file belongs to exactly one group (test/groups/groups.ts), so `npm test` runs it.
import { readdirSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { filesOf, groupName, GROUPS, TEST_DIR } from './groups.ts'

t.test('every test file is in exactly one group', async (t) => {
  const all = readdirSync(TEST_DIR, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.test.ts') && !file.startsWith('groups/'))
    .sort()
  t.ok(all.length > 100, `${all.length} test files`)
  const grouped = Object.keys(GROUPS).flatMap(filesOf).sort()
  t.same(grouped, all, 'each file once')
  const groupFiles = readdirSync(path.join(TEST_DIR, 'groups'))
    .filter((name) => name.endsWith('.test.ts') && name !== 'every-file.test.ts')
    .map(groupName)
    .sort()
  t.same(groupFiles, Object.keys(GROUPS).sort(), 'a file per group')
})
