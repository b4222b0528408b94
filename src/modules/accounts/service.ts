// Human accounts: register (open once the workspace exists), login (never reveals whether an
// e-mail is known: unknown, not-yet-activated and wrong-password cases give the same answer after
// the same bcrypt work), and "who am I".
import type { ServiceContext } from '../context.ts'
import type { Db, Prisma } from '../../db/client.ts'
import { AppError, forbidden, notFound, unauthorized } from '../../lib/errors.ts'
import { uuidv7 } from '../../lib/ids.ts'
import { hashPassword, verifyAgainstDummy, verifyPassword } from '../../lib/password.ts'
import type { HumanPrincipal, Principal } from '../identity/principal.ts'
import { workspaceInstance } from '../workspace/service.ts'
import { approveUser, countUsers, createUser, deleteAwaitingUser, findUserByEmail, findUserById, listActiveUsers, listAwaitingApproval, updateProfile } from './repo.ts'
import { assertPassword, normalizeEmail } from './rules.ts'
import type { LoginBody, Me, Person, RegisterBody, RegisteredUser, RegistrationInfo, RegistrationList, Session, UpdatedMe, UpdateMeBody } from './schemas.ts'

const LOGIN_FAILED = 'invalid e-mail or password'

const isUniqueViolation = (error: unknown): boolean => (error as { code?: string })?.code === 'P2002'

export const emailTaken = (): AppError => new AppError('EMAIL_TAKEN', 'an account with this e-mail already exists')

/**
 * Registration opens once the workspace is bootstrapped: before that a stranger could otherwise
 * create the first user and make bootstrap answer 409 forever. Registered users are members with
 * no channels until someone adds them. The workspace's `registration_mode` decides the rest:
 * `open` (active at once), `approval` (the default: the account may only call GET /auth/me until
 * the owner approves it), `closed` (403 REGISTRATION_CLOSED).
 */
export async function register(ctx: ServiceContext, body: RegisterBody, clientAddress?: string): Promise<RegisteredUser> {
  assertPassword(body.password)
  const email = normalizeEmail(body.email)
  const prisma = ctx.db.prisma
  const instance = await workspaceInstance(prisma)
  if (!instance) {
    throw forbidden('registration opens once the workspace is bootstrapped (POST /api/v1/bootstrap)')
  }
  if (instance.registrationMode === 'closed') {
    throw new AppError('REGISTRATION_CLOSED', 'self-registration is closed in this workspace; ask its owner for an invitation')
  }
  if (await findUserByEmail(prisma, email)) throw emailTaken()
  const passwordHash = await hashPassword(body.password, ctx.config.passwordCost, { address: clientAddress, account: email })
  try {
    const user = await createUser(prisma, {
      id: uuidv7(),
      email,
      displayName: body.display_name.trim(),
      passwordHash,
      role: 'member',
      status: 'active',
      awaitingApproval: instance.registrationMode !== 'open',
    })
    return toRegisteredUser(user)
  } catch (error) {
    if (isUniqueViolation(error)) throw emailTaken()
    throw error
  }
}

const toRegisteredUser = (user: { id: string; email: string; displayName: string; role: 'admin' | 'member' | 'observer'; createdAt: Date }): RegisteredUser => ({
  id: user.id,
  email: user.email,
  display_name: user.displayName,
  role: user.role,
  created_at: user.createdAt.toISOString(),
})

/** What a sign-up page shows before anyone logs in: whether it can register, and how. */
export async function registrationInfo(ctx: ServiceContext): Promise<RegistrationInfo> {
  const instance = await workspaceInstance(ctx.db.prisma)
  return { bootstrapped: Boolean(instance), registration_mode: instance ? (instance.registrationMode as RegistrationInfo['registration_mode']) : 'closed' }
}

/**
 * The people of the workspace: every human with an active account, with their role. Any member
 * (human or agent) may read it, to find someone to add to a channel or to write to.
 */
export async function listPeople(ctx: ServiceContext): Promise<Person[]> {
  return (await listActiveUsers(ctx.db.prisma)).map((user) => ({
    id: user.id,
    email: user.email,
    display_name: user.displayName,
    avatar_url: user.avatarUrl,
    role: user.role,
    is_owner: user.isOwner,
    created_at: user.createdAt.toISOString(),
  }))
}

/** Self-registered accounts awaiting the owner's approval. */
export async function listRegistrations(ctx: ServiceContext): Promise<RegistrationList> {
  return { registrations: (await listAwaitingApproval(ctx.db.prisma)).map(toRegisteredUser) }
}

/** The owner approves an account: it becomes an ordinary member from its next request on. */
export async function approveRegistration(ctx: ServiceContext, id: string): Promise<RegisteredUser> {
  const user = await approveUser(ctx.db.prisma, id)
  if (!user) throw notFound('registration awaiting approval')
  return toRegisteredUser(user)
}

/** The owner refuses an account: it is deleted (its e-mail may register again). */
export async function rejectRegistration(ctx: ServiceContext, id: string): Promise<void> {
  if (!(await deleteAwaitingUser(ctx.db.prisma, id))) throw notFound('registration awaiting approval')
}

export function sessionFor(ctx: ServiceContext, user: { id: string; email: string; displayName: string; role: 'admin' | 'member' | 'observer'; isOwner: boolean; sessionVersion: number }): Session {
  const token = ctx.tokens.sign(user.id, user.sessionVersion)
  const { exp } = ctx.tokens.decode(token) ?? { exp: Math.floor(Date.now() / 1000) + 86_400 }
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

/**
 * Failed logins are counted per account and per client address and limited before any bcrypt
 * work (src/plugins/login-limit.ts); bcrypt itself has a bounded queue, fair per address and
 * per account, which sheds the heaviest caller first (503 with Retry-After).
 */
export async function login(ctx: ServiceContext, body: LoginBody, clientAddress: string): Promise<Session> {
  const email = normalizeEmail(body.email)
  await ctx.loginLimit.assertAllowed(email, clientAddress)
  // The check's place in the fair bcrypt queue: a flood on this account or from this address waits
  // behind other people's logins (src/lib/fair-queue.ts).
  const owner = { address: clientAddress, account: email }
  const user = await findUserByEmail(ctx.db.prisma, email)
  if (!user || !user.passwordHash || user.status !== 'active') {
    await verifyAgainstDummy(body.password, ctx.config.passwordCost, owner)
    await ctx.loginLimit.recordFailure(email, clientAddress)
    throw unauthorized(LOGIN_FAILED)
  }
  if (!(await verifyPassword(body.password, user.passwordHash, owner))) {
    await ctx.loginLimit.recordFailure(email, clientAddress)
    throw unauthorized(LOGIN_FAILED)
  }
  await ctx.loginLimit.clear(email)
  return sessionFor(ctx, user)
}

export function describeCaller(principal: Principal): Me {
  if (principal.kind === 'human') {
    return {
      type: 'HUMAN',
      id: principal.id,
      email: principal.email,
      display_name: principal.displayName,
      avatar_url: principal.avatarUrl ?? null,
      role: principal.role,
      is_owner: principal.isOwner,
    }
  }
  if (principal.kind === 'agent') {
    return { type: 'AGENT', id: principal.id, name: principal.name, display_name: principal.displayName, key_id: principal.keyId }
  }
  throw forbidden('integration keys have no account')
}

const wrongPassword = (): AppError => new AppError('WRONG_PASSWORD', 'the current password is not correct; nothing was changed')

/**
 * The signed-in human changes their profile: display name, avatar, password. A password change
 * takes the current password (a wrong one counts towards the account's login limit, so a stolen
 * session cannot guess it quickly) and ends every session issued before it, this one included:
 * the answer carries a new token for the caller (docs/decisions.md, "People"). A new name or
 * avatar is pushed to every connected client as a `user_updated` frame.
 */
export async function updateMe(ctx: ServiceContext, principal: HumanPrincipal, body: UpdateMeBody, clientAddress: string): Promise<UpdatedMe> {
  if ((body.new_password === undefined) !== (body.current_password === undefined)) {
    throw new AppError('VALIDATION_ERROR', "'new_password' and 'current_password' go together: a password change takes the current one")
  }
  const data: { displayName?: string; avatarUrl?: string | null; passwordHash?: string } = {}
  if (body.display_name !== undefined) data.displayName = body.display_name.trim()
  if (body.avatar_url !== undefined) data.avatarUrl = body.avatar_url
  if (body.new_password !== undefined) {
    assertPassword(body.new_password)
    data.passwordHash = await checkedNewPassword(ctx, principal, body.current_password!, body.new_password, clientAddress)
  }
  const user = await updateProfile(ctx.db.prisma, principal.id, data)
  const me: UpdatedMe = {
    type: 'HUMAN',
    id: user.id,
    email: user.email,
    display_name: user.displayName,
    avatar_url: user.avatarUrl,
    role: user.role,
    is_owner: user.isOwner,
  }
  if (data.passwordHash) {
    const session = sessionFor(ctx, user)
    me.session = { token: session.token, expires_at: session.expires_at }
  }
  if (user.displayName !== principal.displayName || user.avatarUrl !== (principal.avatarUrl ?? null)) {
    ctx.signals.publish({ channelIds: 'workspace', except: null, frame: { type: 'user_updated', user_id: user.id, display_name: user.displayName, avatar_url: user.avatarUrl } })
  }
  return me
}

/** The bcrypt hash of the new password, once the current one is verified (else WRONG_PASSWORD). */
async function checkedNewPassword(ctx: ServiceContext, principal: HumanPrincipal, current: string, next: string, clientAddress: string): Promise<string> {
  await ctx.loginLimit.assertAllowed(principal.email, clientAddress)
  const user = await findUserById(ctx.db.prisma, principal.id)
  if (!user?.passwordHash || !(await verifyPassword(current, user.passwordHash))) {
    await ctx.loginLimit.recordFailure(principal.email, clientAddress)
    throw wrongPassword()
  }
  await ctx.loginLimit.clear(principal.email)
  return hashPassword(next, ctx.config.passwordCost)
}

// For other modules (bootstrap, invites) and the auth plugin: users by id or e-mail, in the
// caller's transaction when it passes one.

/** The user with this id (any status), or null. */
export function userById(db: Db, id: string) {
  return findUserById(db, id)
}

/** The user with this (normalised) e-mail, or null. */
export function userByEmail(db: Db, email: string) {
  return findUserByEmail(db, email)
}

export function userCount(db: Db): Promise<number> {
  return countUsers(db)
}

export function insertUser(db: Db, data: Prisma.UserUncheckedCreateInput) {
  return createUser(db, data)
}
