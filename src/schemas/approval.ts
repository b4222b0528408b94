// The approval object an agent's request becomes (docs/approvals.md), as every read shows it and
// the message carries it: below the modules and the event catalog, which both use it. The
// request and the decision bodies are the approvals module's (src/modules/approvals/schemas.ts).
import { Type, type Static } from 'typebox'
import { Timestamp, Uuid } from './common.ts'

export const APPROVAL_CHOICES = ['approve', 'deny', 'edit', 'respond'] as const
export type ApprovalChoice = (typeof APPROVAL_CHOICES)[number]
export const APPROVAL_STATUSES = ['pending', 'approved', 'denied', 'expired', 'cancelled'] as const
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number]

export const APPROVERS_MAX = 50

export const Choice = Type.Union([Type.Literal('approve'), Type.Literal('deny'), Type.Literal('edit'), Type.Literal('respond')], {
  description:
    '`approve`: run the action with the arguments shown; `deny`: do not run it; `edit`: run it with arguments the approver changed; `respond`: do not run it as asked, and read the free-text answer in `comment`.',
})

export const Approvers = Type.Union([Type.Literal('members'), Type.Literal('owner'), Type.Array(Uuid, { minItems: 1, maxItems: APPROVERS_MAX, uniqueItems: true })], {
  description:
    'Who may decide: `members` (any human member of the conversation; the default), `owner` (the workspace owner only), or a list of user ids (humans; each must also be able to read the conversation when deciding). Agents never decide.',
})

export const Arguments = Type.Unsafe<Record<string, unknown>>({
  type: 'object',
  additionalProperties: true,
  description: 'A JSON object, shown to the approver as it is (at most 32,768 characters as JSON).',
})

export const ApprovalSchema = Type.Object(
  {
    message_id: Uuid,
    channel_id: Uuid,
    requester_id: { ...Uuid, description: 'The agent that asked.' },
    action: Type.String(),
    arguments: { ...Arguments, description: 'The arguments as requested (never changed after posting).' },
    summary: Type.String(),
    choices: Type.Array(Choice, { description: 'The choices offered, `deny` always among them.' }),
    approvers: Approvers,
    expires_at: Timestamp,
    on_expiry: Type.Union([Type.Literal('deny'), Type.Literal('approve')]),
    digest: Type.String({
      pattern: '^[0-9a-f]{64}$',
      description: 'SHA-256 (hex) of the canonical JSON of `{action, arguments}` (keys sorted): a decision is checked against it, and may name it to bind itself to what was shown.',
    }),
    status: Type.Union([Type.Literal('pending'), Type.Literal('approved'), Type.Literal('denied'), Type.Literal('expired'), Type.Literal('cancelled')], {
      description: '`pending` until a decision (`approved`: approve or edit; `denied`: deny or respond), a cancellation by the agent, or the expiry.',
    }),
    decision: Type.Union([Choice, Type.Null()], { description: "The decider's choice; on expiry, `on_expiry`; null while pending or when cancelled." }),
    decided_by: Type.Union([Uuid, Type.Null()], { description: 'The human who decided (the agent, when it cancelled); null while pending and on expiry.' }),
    decided_by_name: Type.Union([Type.String(), Type.Null()], { description: 'Their display name at the time.' }),
    decided_at: Type.Union([Timestamp, Type.Null()], { description: 'When it was decided, cancelled or expired.' }),
    comment: Type.Union([Type.String(), Type.Null()], { description: "The decider's comment; for `respond`, the answer." }),
    final_arguments: Type.Union([Arguments, Type.Null()], {
      description: 'What the agent may run the action with: the arguments for `approve` (and an expiry that approves), the edited ones for `edit`; null otherwise.',
    }),
  },
  { title: 'Approval', additionalProperties: false },
)
export type ApprovalDto = Static<typeof ApprovalSchema>

/** A row as the database has it (Prisma's names), the one source of the DTO. */
export interface ApprovalRecord {
  messageId: string
  channelId: string
  requesterId: string
  action: string
  arguments: unknown
  summary: string
  choices: string[]
  approvers: unknown
  expiresAt: Date
  onExpiry: string
  digest: string
  status: string
  decision: string | null
  decidedBy: string | null
  decidedByName: string | null
  decidedAt: Date | null
  comment: string | null
  finalArguments: unknown
}

type Obj = Record<string, unknown>

export function toApprovalDto(r: ApprovalRecord): ApprovalDto {
  return {
    message_id: r.messageId,
    channel_id: r.channelId,
    requester_id: r.requesterId,
    action: r.action,
    arguments: r.arguments as Obj,
    summary: r.summary,
    choices: r.choices as ApprovalChoice[],
    approvers: r.approvers as ApprovalDto['approvers'],
    expires_at: r.expiresAt.toISOString(),
    on_expiry: r.onExpiry as ApprovalDto['on_expiry'],
    digest: r.digest,
    status: r.status as ApprovalStatus,
    decision: r.decision as ApprovalChoice | null,
    decided_by: r.decidedBy,
    decided_by_name: r.decidedByName,
    decided_at: r.decidedAt ? r.decidedAt.toISOString() : null,
    comment: r.comment,
    final_arguments: (r.finalArguments ?? null) as Obj | null,
  }
}

/** A row selected as `to_jsonb(approvals)` (raw SQL reads) as a record. */
export function approvalRecordOfJson(j: Record<string, unknown>): ApprovalRecord {
  const date = (v: unknown): Date | null => (typeof v === 'string' ? new Date(v) : null)
  return {
    messageId: j.message_id as string,
    channelId: j.channel_id as string,
    requesterId: j.requester_id as string,
    action: j.action as string,
    arguments: j.arguments,
    summary: j.summary as string,
    choices: j.choices as string[],
    approvers: j.approvers,
    expiresAt: date(j.expires_at)!,
    onExpiry: j.on_expiry as string,
    digest: j.digest as string,
    status: j.status as string,
    decision: (j.decision as string | null) ?? null,
    decidedBy: (j.decided_by as string | null) ?? null,
    decidedByName: (j.decided_by_name as string | null) ?? null,
    decidedAt: date(j.decided_at),
    comment: (j.comment as string | null) ?? null,
    finalArguments: j.final_arguments ?? null,
  }
}
