// The server hashes passwords at bcrypt cost 12 (the specification), whatever its environment; the
// tests build apps at a lower cost (test/helper.ts), so this holds the production default itself.
import bcrypt from 'bcryptjs'
import t from 'tap'
import { loadConfig } from '../../src/config.ts'
import { BCRYPT_COST, hashPassword, verifyAgainstDummy, verifyPassword } from '../../src/lib/password.ts'

t.test('a server configured from its environment hashes at cost 12, and no variable lowers it', async (t) => {
  t.equal(BCRYPT_COST, 12)
  t.equal(loadConfig({}).passwordCost, 12, 'the default')
  t.equal(loadConfig({ PASSWORD_COST: '4', BCRYPT_COST: '4', BCRYPT_ROUNDS: '4' }).passwordCost, 12, 'no environment variable sets it')
})

t.test('hashPassword uses the cost it is given; verifyPassword reads the cost from the hash', async (t) => {
  const hash = await hashPassword('a long enough password', 4)
  t.match(hash, /^\$2[aby]\$04\$/)
  t.equal(bcrypt.getRounds(hash), 4)
  t.equal(await verifyPassword('a long enough password', hash), true)
  t.equal(await verifyPassword('another password!!', hash), false)
  t.equal(await verifyAgainstDummy('a long enough password', 4), false, 'the unknown-e-mail path never succeeds')
})
