// Human accounts: register (open once the workspace exists), login (never reveals whether an
// e-mail is known: unknown, not-yet-activated and wrong-password cases give the same answer after
// the same bcrypt work), and "who am I".
import type { FastifyInstance } from 'fastify'
import { AppError, forbidden, unauthorized } from '../../lib/errors.ts'
import { uuidv7 } from '../../lib/ids.ts'
import { hashPassword, verifyAgainstDummy, verifyPassword } from '../../lib/password.ts'
import type { Principal } from '../../plugins/auth.ts'
import { findInstance } from '../workspace/repo.ts'
import { createUser, findUserByEmail } from './repo.ts'
import { assertPassword, normalizeEmail } from './rules.ts'
import type { LoginBody, Me, RegisterBody, RegisteredUser, Session } from './schemas.ts'

const LOGIN_FAILED = 'invalid e-mail or password'

const isUniqueViolation = (error: unknown): boolean => (error as { code?: string })?.code === 'P2002'

export const emailTaken = (): AppError => new AppError('EMAIL_TAKEN', 'an account with this e-mail already exists')

/**
 * Registration opens once the workspace is bootstrapped: before that a stranger could otherwise
 * create the first user and make bootstrap answer 409 forever. Registered users are members with
 * no channels until someone adds them.
 */
export async function register(app: FastifyInstance, body: RegisterBody): Promise<RegisteredUser> {
  assertPassword(body.password)
  const email = normalizeEmail(body.email)
  const prisma = app.db.prisma
  if (!(await findInstance(prisma))) {
    throw forbidden('registration opens once the workspace is bootstrapped (POST /api/v1/bootstrap)')
  }
  if (await findUserByEmail(prisma, email)) throw emailTaken()
  const passwordHash = await hashPassword(body.password)
  try {
    const user = await createUser(prisma, {
      id: uuidv7(),
      email,
      displayName: body.display_name.trim(),
      passwordHash,
      role: 'member',
      status: 'active',
    })
    return { id: user.id, email: user.email, display_name: user.displayName, role: user.role, created_at: user.createdAt.toISOString() }
  } catch (error) {
    if (isUniqueViolation(error)) throw emailTaken()
    throw error
  }
}

export function sessionFor(app: FastifyInstance, user: { id: string; email: string; displayName: string; role: 'admin' | 'member' | 'observer'; isOwner: boolean }): Session {
  const token = app.signUserToken(user.id)
  const { exp } = app.jwt.decode<{ exp: number }>(token) ?? { exp: Math.floor(Date.now() / 1000) + 86_400 }
  return {
    token,
    user_id: user.id,
    email: user.email,
    display_name: user.displayName,
    role: user.role,
    is_owner: user.isOwner,
    expires_at: new Date(exp * 1000).toISOString(),
  }
}

export async function login(app: FastifyInstance, body: LoginBody): Promise<Session> {
  const user = await findUserByEmail(app.db.prisma, normalizeEmail(body.email))
  if (!user || !user.passwordHash || user.status !== 'active') {
    await verifyAgainstDummy(body.password)
    throw unauthorized(LOGIN_FAILED)
  }
  if (!(await verifyPassword(body.password, user.passwordHash))) throw unauthorized(LOGIN_FAILED)
  return sessionFor(app, user)
}

export function describeCaller(principal: Principal): Me {
  if (principal.kind === 'human') {
    return { type: 'HUMAN', id: principal.id, email: principal.email, display_name: principal.displayName, role: principal.role, is_owner: principal.isOwner }
  }
  if (principal.kind === 'agent') {
    return { type: 'AGENT', id: principal.id, name: principal.name, display_name: principal.displayName, key_id: principal.keyId }
  }
  throw forbidden('integration keys have no account')
}
