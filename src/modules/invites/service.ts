// Invites: a token (`inv_…`, stored as SHA-256) that lets an invited human set a password. It
// expires 7 days after creation and is consumed by a single conditional UPDATE, so it works
// once even under concurrent accepts. Acceptance logs the user in (returns a JWT).
import type { ServiceContext } from '../context.ts'
import type { Prisma } from '../../db/client.ts'
import { AppError } from '../../lib/errors.ts'
import { uuidv7 } from '../../lib/ids.ts'
import { hashPassword } from '../../lib/password.ts'
import { INVITE_TOKEN_PREFIX, newSecret, sha256Hex } from '../../lib/tokens.ts'
import { assertPassword, normalizeEmail } from '../accounts/rules.ts'
import type { Session } from '../accounts/schemas.ts'
import { emailTaken, insertUser, sessionFor, userByEmail } from '../accounts/service.ts'
import * as repo from './repo.ts'
import type { AcceptInviteInput, CreatedInvite, CreateInviteInput, InviteDetails, PendingInvite } from './schemas.ts'

export const INVITE_TTL_MS = 7 * 24 * 60 * 60 * 1000

/**
 * `{frontend_url}/invite?token=<invite_token>` with the token percent-encoded: base64's `+`, `/`
 * and `=` are written `%2B`, `%2F` and `%3D`, so every URL parser (the web UI's included) reads
 * back exactly the token. A token pasted raw still works: its `+`, turned into a space by a
 * parser, is turned back on the way in (`canonicalToken`).
 */
export function inviteUrl(ctx: ServiceContext, token: string): string {
  return `${ctx.config.frontendUrl}/invite?token=${encodeURIComponent(token)}`
}

export function newInvite(userId: string, now = new Date()): { token: string; row: Prisma.InviteUncheckedCreateInput } {
  const token = newSecret(INVITE_TOKEN_PREFIX)
  return { token, row: { id: uuidv7(), userId, tokenHash: sha256Hex(token), expiresAt: new Date(now.getTime() + INVITE_TTL_MS), createdAt: now } }
}

/** A default display name for an invited human: the part of the e-mail before the @. */
export const displayNameFromEmail = (email: string): string => email.split('@')[0] || email

const invalid = (): AppError => new AppError('INVITE_INVALID', 'invite token is not valid')
const used = (): AppError => new AppError('INVITE_USED', 'invite token was already used')
const expired = (): AppError => new AppError('INVITE_EXPIRED', 'invite token has expired')

// A token pasted into a URL without encoding arrives with its `+` decoded as a space; base64
// never contains spaces, so turning them back is safe.
const canonicalToken = (token: string): string => token.trim().replaceAll(' ', '+')

async function findUsableInvite(ctx: ServiceContext, token: string) {
  const value = canonicalToken(token)
  if (!value.startsWith(INVITE_TOKEN_PREFIX)) throw invalid()
  const invite = await repo.findInviteByHash(ctx.db.prisma, sha256Hex(value))
  if (!invite) throw invalid()
  if (invite.consumedAt) throw used()
  if (invite.expiresAt.getTime() <= Date.now()) throw expired()
  return invite
}

export async function validateInvite(ctx: ServiceContext, token: string): Promise<InviteDetails> {
  const invite = await findUsableInvite(ctx, token)
  return {
    email: invite.user.email,
    display_name: invite.user.displayName,
    role: invite.user.role === 'observer' ? 'observer' : 'member',
    expires_at: invite.expiresAt.toISOString(),
  }
}

export async function acceptInvite(ctx: ServiceContext, input: AcceptInviteInput, clientAddress?: string): Promise<Session> {
  const invite = await findUsableInvite(ctx, input.token)
  if (input.email !== undefined && normalizeEmail(input.email) !== invite.user.email) {
    throw new AppError('INVITE_EMAIL_MISMATCH', 'this invite was sent to a different e-mail address')
  }
  assertPassword(input.password)
  const passwordHash = await hashPassword(input.password, ctx.config.passwordCost, { address: clientAddress, account: invite.user.email })
  const user = await ctx.events.transaction(async (tx) => {
    const now = new Date()
    if (!(await repo.consumeInvite(tx, invite.id, now))) {
      const current = await repo.findInvite(tx, invite.id)
      throw current?.consumedAt ? used() : current ? expired() : invalid()
    }
    return repo.activateUser(tx, invite.userId, passwordHash, input.display_name?.trim())
  })
  return sessionFor(ctx, user)
}

/**
 * The owner invites a human: a new invited user (no password), or, for someone invited before
 * who has not accepted yet, a fresh token replacing the old ones. An e-mail with an active
 * account gives 409 EMAIL_TAKEN.
 */
export async function createInvite(ctx: ServiceContext, input: CreateInviteInput): Promise<CreatedInvite> {
  const email = normalizeEmail(input.email)
  const role = input.role ?? 'member'
  try {
    return await ctx.events.transaction(async (tx) => {
      let user = await userByEmail(tx, email)
      if (user && user.status === 'active') throw emailTaken()
      if (user) {
        await repo.deleteOpenInvites(tx, user.id)
        user = await repo.updateInvitedUser(tx, user.id, { displayName: input.display_name?.trim() ?? user.displayName, role })
      } else {
        user = await insertUser(tx, {
          id: uuidv7(),
          email,
          displayName: input.display_name?.trim() ?? displayNameFromEmail(email),
          role,
          status: 'invited',
        })
      }
      const { token, row } = newInvite(user.id)
      await repo.createInvite(tx, row)
      return {
        user_id: user.id,
        email: user.email,
        display_name: user.displayName,
        role,
        invite_token: token,
        invite_url: inviteUrl(ctx, token),
        expires_at: (row.expiresAt as Date).toISOString(),
      }
    })
  } catch (error) {
    if ((error as { code?: string })?.code === 'P2002') throw emailTaken()
    throw error
  }
}

/**
 * The invites the owner is waiting on: one per invited person (their latest token; inviting
 * again replaces the earlier ones), expired ones included so the owner can send a new link.
 */
export async function listPendingInvites(ctx: ServiceContext): Promise<PendingInvite[]> {
  const now = Date.now()
  const seen = new Set<string>()
  const pending: PendingInvite[] = []
  for (const invite of await repo.listOpenInvites(ctx.db.prisma)) {
    if (seen.has(invite.userId)) continue
    seen.add(invite.userId)
    pending.push({
      user_id: invite.userId,
      email: invite.user.email,
      display_name: invite.user.displayName,
      role: invite.user.role === 'observer' ? 'observer' : 'member',
      created_at: invite.createdAt.toISOString(),
      expires_at: invite.expiresAt.toISOString(),
      expired: invite.expiresAt.getTime() <= now,
    })
  }
  return pending
}
