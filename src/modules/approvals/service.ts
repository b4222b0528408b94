// Human approval in the conversation (docs/approvals.md). An agent's message may carry a request
// (`prepareRequest`, inserted by the message's own statement); an eligible human decides once
// (`decide`: the first valid decision wins, later ones get the standing outcome), the agent may
// cancel while pending, and the sweep (src/workers/approval-expiry.ts) applies `on_expiry`.
// Every outcome is an event addressed to the requesting agent (approval.decided, .cancelled,
// .expired): its inbox, WebSocket, SSE, webhooks and integrations.
import type { ServiceContext } from '../context.ts'
import type { Emit } from '../../events/bus.ts'
import { AppError, badRequest, forbidden, notFound } from '../../lib/errors.ts'
import type { MemberPrincipal } from '../identity/principal.ts'
import { readableChannel } from '../channels/access.ts'
import { addressedMap } from '../inbox/addressed.ts'
import { approvalDigest, canonicalJson } from './digest.ts'
import * as repo from './repo.ts'
import { toApprovalDto, type ApprovalChoice, type ApprovalDto, type ApprovalRecord } from '../../schemas/approval.ts'
import { ARGUMENTS_MAX_CHARS, EXPIRES_IN_DEFAULT, type ApprovalRequest, type DecideInput } from './schemas.ts'

function assertArguments(args: unknown, field: string): Record<string, unknown> {
  if (args === null || typeof args !== 'object' || Array.isArray(args)) throw badRequest(`'${field}' must be a JSON object`)
  if (canonicalJson(args).length > ARGUMENTS_MAX_CHARS) throw badRequest(`'${field}' is longer than ${ARGUMENTS_MAX_CHARS} characters as JSON`)
  return args as Record<string, unknown>
}

/**
 * The pending request a new message carries, checked: agents only (403), arguments a JSON object
 * within the limit, listed approvers users of the workspace (400). `deny` is always offered.
 */
export async function prepareRequest(ctx: ServiceContext, author: MemberPrincipal, ids: { messageId: string; channelId: string; createdAt: Date }, request: ApprovalRequest): Promise<ApprovalRecord> {
  if (author.kind !== 'agent') throw forbidden('only agents ask for approval')
  const args = assertArguments(request.arguments ?? {}, 'approval.arguments')
  const offered = new Set<ApprovalChoice>(request.choices ?? ['approve', 'deny'])
  offered.add('deny')
  const choices = (['approve', 'deny', 'edit', 'respond'] as const).filter((c) => offered.has(c))
  const approvers = request.approvers ?? 'members'
  if (Array.isArray(approvers)) {
    const lowered = approvers.map((id) => id.toLowerCase())
    const found = new Set(await repo.existingUsers(ctx.db.pool, lowered))
    const unknown = lowered.filter((id) => !found.has(id))
    if (unknown.length) throw badRequest(`'approval.approvers' must list users of the workspace (humans); not one: ${unknown.join(', ')}`)
  }
  return {
    messageId: ids.messageId,
    channelId: ids.channelId,
    requesterId: author.id,
    action: request.action,
    arguments: args,
    summary: request.summary,
    choices,
    approvers: Array.isArray(approvers) ? approvers.map((id) => id.toLowerCase()) : approvers,
    expiresAt: new Date(ids.createdAt.getTime() + (request.expires_in ?? EXPIRES_IN_DEFAULT) * 1000),
    onExpiry: request.on_expiry ?? 'deny',
    digest: approvalDigest(request.action, args),
    status: 'pending',
    decision: null,
    decidedBy: null,
    decidedByName: null,
    decidedAt: null,
    comment: null,
    finalArguments: null,
  }
}

/** Who may decide: a human who may read the channel (else 404), not an observer, among the approvers. */
function assertMayDecide(principal: MemberPrincipal, approval: ApprovalRecord, member: boolean): void {
  if (principal.kind !== 'human') throw forbidden('agents may not decide approval requests')
  if (principal.role === 'observer') throw forbidden('observers may not decide approval requests')
  if (!mayDecide(principal, approval, member)) throw forbidden('you are not among the approvers of this request')
}

function mayDecide(principal: MemberPrincipal, approval: ApprovalRecord, member: boolean): boolean {
  if (principal.kind !== 'human' || principal.role === 'observer') return false
  const approvers = approval.approvers
  if (approvers === 'members') return member || principal.isOwner
  if (approvers === 'owner') return principal.isOwner
  return Array.isArray(approvers) && approvers.includes(principal.id)
}

async function approvalFor(ctx: ServiceContext, principal: MemberPrincipal, channelId: string, messageId: string) {
  const access = await readableChannel(ctx, principal, channelId)
  const approval = await repo.findApproval(ctx.db.pool, channelId, messageId)
  if (!approval) throw notFound('approval request')
  return { access, approval }
}

export async function getApproval(ctx: ServiceContext, principal: MemberPrincipal, channelId: string, messageId: string): Promise<ApprovalDto> {
  return toApprovalDto((await approvalFor(ctx, principal, channelId, messageId)).approval)
}

/** The request was decided, cancelled or expired before this call: the outcome that stands. */
export class AlreadyDecided extends AppError {
  constructor(readonly approval: ApprovalDto) {
    super('ALREADY_DECIDED', `this request is ${approval.status} already${approval.decided_by_name ? ` (by ${approval.decided_by_name})` : ''}`)
  }
}

function eventOf(status: string): 'approval.decided' | 'approval.cancelled' | 'approval.expired' {
  if (status === 'cancelled') return 'approval.cancelled'
  if (status === 'expired') return 'approval.expired'
  return 'approval.decided'
}

/** Emits the outcome's event, addressed to the requesting agent (unless it is the actor). */
function emitOutcome(emit: Emit, record: ApprovalRecord, actorId: string | null): void {
  const approval = toApprovalDto(record)
  const event = emit(eventOf(record.status), record.channelId, { approval })
  const addressed = addressedMap(actorId ?? '', [['approval', [record.requesterId]]])
  if (addressed) event.addressed = addressed
}

function outcomeOf(approval: ApprovalRecord, input: DecideInput): { status: 'approved' | 'denied'; finalArguments: unknown; comment: string | null } {
  if (!approval.choices.includes(input.decision)) throw badRequest(`this request does not offer '${input.decision}' (choices: ${approval.choices.join(', ')})`)
  if (input.arguments !== undefined && input.decision !== 'edit') throw badRequest("'arguments' goes with the decision 'edit' only")
  const comment = input.comment?.trim() ? input.comment : null
  switch (input.decision) {
    case 'approve':
      return { status: 'approved', finalArguments: approval.arguments, comment }
    case 'edit':
      if (input.arguments === undefined) throw badRequest("'edit' needs 'arguments': the arguments to run the action with")
      return { status: 'approved', finalArguments: assertArguments(input.arguments, 'arguments'), comment }
    case 'respond':
      if (!comment) throw badRequest("'respond' needs a non-blank 'comment': the answer")
      return { status: 'denied', finalArguments: null, comment }
    default:
      return { status: 'denied', finalArguments: null, comment }
  }
}

/**
 * Decides a pending request. Refusals come first and change nothing: 404 (cannot read the
 * channel, no such request), 403 (agent, observer, not an approver), 400 (a choice not offered,
 * bad arguments), 409 CONFLICT (the request is not what was shown: its digest does not match).
 * Then one UPDATE … WHERE status = 'pending': the first decision wins; a later one, or one after
 * a cancellation or the expiry, throws AlreadyDecided with the outcome that stands.
 */
export async function decide(ctx: ServiceContext, principal: MemberPrincipal, channelId: string, messageId: string, input: DecideInput): Promise<ApprovalDto> {
  const { access, approval } = await approvalFor(ctx, principal, channelId, messageId)
  assertMayDecide(principal, approval, access.member)
  const outcome = outcomeOf(approval, input)
  if (approval.status !== 'pending') throw new AlreadyDecided(toApprovalDto(approval))
  // Bound to what was shown: the stored request must still hash to its digest, and to the one the
  // approver names.
  const digest = approvalDigest(approval.action, approval.arguments)
  if (digest !== approval.digest) throw new AppError('CONFLICT', 'this request was altered after it was posted; it cannot be decided')
  if (input.digest !== undefined && input.digest !== digest) throw new AppError('CONFLICT', 'the request differs from the one you were shown (digest mismatch); read it again')
  const decided = await ctx.events.transaction(async (tx, emit) => {
    const row = await repo.settle(tx, messageId, approval, {
      status: outcome.status,
      decision: input.decision,
      decidedBy: principal.id,
      decidedByName: principal.displayName,
      comment: outcome.comment,
      finalArguments: outcome.finalArguments,
    })
    if (row) emitOutcome(emit, row, principal.id)
    return row
  })
  if (decided) return toApprovalDto(decided)
  // Lost the race (or it expired this instant): the outcome that stands.
  const standing = await repo.findApproval(ctx.db.pool, channelId, messageId)
  if (!standing) throw notFound('approval request')
  if (standing.status === 'pending') throw new AppError('CONFLICT', 'this request was altered after it was posted; it cannot be decided')
  throw new AlreadyDecided(toApprovalDto(standing))
}

/** The requesting agent withdraws its pending request (403 for anyone else; 409 once it is settled). */
export async function cancel(ctx: ServiceContext, principal: MemberPrincipal, channelId: string, messageId: string): Promise<ApprovalDto> {
  const { approval } = await approvalFor(ctx, principal, channelId, messageId)
  if (approval.requesterId !== principal.id) throw forbidden('only the agent that asked may cancel the request')
  if (approval.status !== 'pending') throw new AlreadyDecided(toApprovalDto(approval))
  const cancelled = await ctx.events.transaction(async (tx, emit) => {
    const row = await repo.settle(tx, messageId, approval, { status: 'cancelled', decision: null, decidedBy: principal.id, decidedByName: principal.displayName, comment: null, finalArguments: null })
    if (row) emitOutcome(emit, row, principal.id)
    return row
  })
  if (cancelled) return toApprovalDto(cancelled)
  const standing = await repo.findApproval(ctx.db.pool, channelId, messageId)
  if (!standing) throw notFound('approval request')
  throw new AlreadyDecided(toApprovalDto(standing))
}

/** "Needs your decision": pending requests the caller may decide, soonest expiry first (agents: none). */
export async function pendingForCaller(ctx: ServiceContext, principal: MemberPrincipal, limit: number): Promise<{ approvals: ApprovalDto[] }> {
  if (principal.kind !== 'human' || principal.role === 'observer') return { approvals: [] }
  const rows = await repo.pendingFor(ctx.db.pool, principal.id, principal.isOwner, limit)
  return { approvals: rows.map(toApprovalDto) }
}

// ---- expiry (src/workers/approval-expiry.ts) ----

const EXPIRE_BATCH = 100

/** Expires every due request (each with its event); answers how many. */
export async function expireDue(ctx: ServiceContext): Promise<number> {
  let total = 0
  for (;;) {
    const expired = await ctx.events.transaction(async (tx, emit) => {
      const rows = await repo.expireDue(tx, EXPIRE_BATCH)
      for (const row of rows) emitOutcome(emit, row, null)
      return rows.length
    })
    total += expired
    if (expired < EXPIRE_BATCH) return total
  }
}

export const nextExpiry = (ctx: ServiceContext): Promise<Date | null> => repo.nextExpiry(ctx.db.pool)

/** Whether a message's approval refuses an edit of its text: while pending, what is approved must not change. */
export const refusesEdit = (approval: { status: string } | null | undefined): boolean => approval?.status === 'pending'
