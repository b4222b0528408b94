// uuid[] parameters as one array literal (src/db/params.ts), and PostgreSQL reading them as the
// same array: an id list goes as a literal only when every id is shaped as a UUID.
import t from 'tap'
import { uuidArray } from '../../src/db/params.ts'
import { uuidv7 } from '../../src/lib/ids.ts'
import { build } from '../helper.ts'

t.test('UUID-shaped ids: one literal; anything else: the array as given', async (t) => {
  const a = uuidv7()
  const upper = uuidv7().toUpperCase()
  t.equal(uuidArray([a, upper]), `{${a},${upper}}`, 'either case')
  t.equal(uuidArray([]), '{}', 'none: the empty array')
  const odd = [a, 'x","y']
  t.equal(uuidArray(odd), odd, 'a list with anything else goes escaped, as before')
})

t.test('PostgreSQL reads the literal as the array; a malformed id is refused as before', async (t) => {
  const { app } = await build(t)
  const ids = Array.from({ length: 1_000 }, () => uuidv7())
  const { rows } = await app.db.pool.query<{ id: string }>('SELECT x::text AS id FROM unnest($1::uuid[]) WITH ORDINALITY AS u(x, n) ORDER BY n', [uuidArray(ids)])
  t.same(
    rows.map((r) => r.id),
    ids,
    'the same ids, in order',
  )
  await t.rejects(app.db.pool.query('SELECT $1::uuid[]', [uuidArray([ids[0]!, 'not-a-uuid'])]), { code: '22P02' }, 'invalid input syntax for type uuid')
})
