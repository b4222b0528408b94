// bcrypt with cost 12, computed on worker threads (src/lib/bcrypt-pool.ts): bcryptjs's own async
// API blocks the event loop in 100 ms slices, which stalls other requests during logins
// (measured in scripts/bench/bcrypt-event-loop.ts).
import { compareInWorker, hashInWorker } from './bcrypt-pool.ts'

export const BCRYPT_COST = 12
export const MIN_PASSWORD_LENGTH = 12

export function hashPassword(password: string): Promise<string> {
  return hashInWorker(password, BCRYPT_COST)
}

export function verifyPassword(password: string, hash: string): Promise<boolean> {
  return compareInWorker(password, hash)
}

// A real hash to compare against when the e-mail is unknown, so both paths cost the same.
let dummyHash: Promise<string> | undefined
export function verifyAgainstDummy(password: string): Promise<boolean> {
  dummyHash ??= hashInWorker('not-a-real-password-0000', BCRYPT_COST)
  return dummyHash.then((hash) => compareInWorker(password, hash)).then(() => false)
}
