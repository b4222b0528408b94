// bcrypt with cost 12, computed on worker threads (src/lib/bcrypt-pool.ts): bcryptjs's own async
// API blocks the event loop in 100 ms slices, which stalls other requests during logins
// (measured in scripts/bench/bcrypt-event-loop.ts).
import { compareInWorker, hashInWorker, type CheckOwner } from './bcrypt-pool.ts'

export type { CheckOwner }

export const BCRYPT_COST = 12
export const MIN_PASSWORD_LENGTH = 12

/** `owner`: the request's client address and the account, which place the work in the fair queue. */
export function hashPassword(password: string, owner?: CheckOwner): Promise<string> {
  return hashInWorker(password, BCRYPT_COST, owner)
}

export function verifyPassword(password: string, hash: string, owner?: CheckOwner): Promise<boolean> {
  return compareInWorker(password, hash, owner)
}

// A real hash to compare against when the e-mail is unknown, so both paths cost the same.
let dummyHash: Promise<string> | undefined
export function verifyAgainstDummy(password: string, owner?: CheckOwner): Promise<boolean> {
  if (!dummyHash) {
    const created = hashInWorker('not-a-real-password-0000', BCRYPT_COST, { account: 'dummy' })
    dummyHash = created
    // A failed creation (shed by a flood) is not kept: the next call tries again.
    created.catch(() => {
      if (dummyHash === created) dummyHash = undefined
    })
  }
  return dummyHash.then((hash) => compareInWorker(password, hash, owner)).then(() => false)
}
