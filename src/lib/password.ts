// bcrypt with cost 12 (the specification; AppConfig.passwordCost), computed on worker threads (src/lib/bcrypt-pool.ts): bcryptjs's own async
// API blocks the event loop in 100 ms slices, which stalls other requests during logins
// (measured in scripts/bench/bcrypt-event-loop.ts).
import { compareInWorker, hashInWorker, type CheckOwner } from './bcrypt-pool.ts'

export type { CheckOwner }

export const BCRYPT_COST = 12
export const MIN_PASSWORD_LENGTH = 12

/**
 * `cost`: AppConfig.passwordCost, 12 in every server (only a program that builds the app, the tests,
 * sets another). `owner`: the request's client address and the account, which place the work in the
 * fair queue.
 */
export function hashPassword(password: string, cost: number, owner?: CheckOwner): Promise<string> {
  return hashInWorker(password, cost, owner)
}

export function verifyPassword(password: string, hash: string, owner?: CheckOwner): Promise<boolean> {
  return compareInWorker(password, hash, owner)
}

// A real hash, at the cost new hashes get, to compare against when the e-mail is unknown, so both
// paths cost the same.
const dummyHashes = new Map<number, Promise<string>>()
export function verifyAgainstDummy(password: string, cost: number, owner?: CheckOwner): Promise<boolean> {
  let dummyHash = dummyHashes.get(cost)
  if (!dummyHash) {
    const created = hashInWorker('not-a-real-password-0000', cost, { account: 'dummy' })
    dummyHashes.set(cost, created)
    // A failed creation (shed by a flood) is not kept: the next call tries again.
    created.catch(() => {
      if (dummyHashes.get(cost) === created) dummyHashes.delete(cost)
    })
    dummyHash = created
  }
  return dummyHash.then((hash) => compareInWorker(password, hash, owner)).then(() => false)
}
