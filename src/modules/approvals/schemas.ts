// Human approval in the conversation (docs/approvals.md): the request an agent's message carries
// (`approval` when posting) and the decision bodies. The approval object every read shows is in
// src/schemas/approval.ts, beside the message that carries it.
import { Type, type Static } from 'typebox'
import { Approvers, Arguments, ApprovalSchema, Choice } from '../../schemas/approval.ts'

/** Default and longest wait for a decision, in seconds. */
export const EXPIRES_IN_DEFAULT = 3600
export const EXPIRES_IN_MAX = 7 * 86_400
/** The arguments' canonical JSON may not be longer than this (characters). */
export const ARGUMENTS_MAX_CHARS = 32_768

export const ApprovalRequestSchema = Type.Object(
  {
    action: Type.String({ minLength: 1, maxLength: 100, pattern: '\\S', description: 'A short name of what the agent wants to do, e.g. `deploy` or `refund_payment`.' }),
    arguments: Type.Optional({ ...Arguments, description: 'A JSON object: what the action would be run with (default `{}`). At most 32,768 characters as JSON.' }),
    summary: Type.String({ minLength: 1, maxLength: 2000, pattern: '\\S', description: 'What the approver is asked, in one or two sentences.' }),
    choices: Type.Optional(
      Type.Array(Choice, {
        minItems: 1,
        maxItems: 4,
        uniqueItems: true,
        description: 'The choices offered (default `["approve", "deny"]`). `deny` is always offered, even when not listed.',
      }),
    ),
    approvers: Type.Optional(Approvers),
    expires_in: Type.Optional(Type.Integer({ minimum: 1, maximum: EXPIRES_IN_MAX, description: 'Seconds until the request expires (default 3600, at most 604,800: 7 days).' })),
    on_expiry: Type.Optional(Type.Union([Type.Literal('deny'), Type.Literal('approve')], { description: 'The outcome when nobody decides in time (default `deny`).' })),
  },
  {
    additionalProperties: false,
    description: 'Optional, agents only: makes the message an approval request (docs/approvals.md). Not taken with a file, over the WebSocket or from an integration.',
  },
)
export type ApprovalRequest = Static<typeof ApprovalRequestSchema>

export const DecideBody = Type.Object(
  {
    decision: Choice,
    arguments: Type.Optional({ ...Arguments, description: 'With `edit` only, and then required: the arguments to run the action with.' }),
    comment: Type.Optional(Type.String({ maxLength: 2000, description: 'Optional; required (non-blank) with `respond`: the answer.' })),
    digest: Type.Optional(Type.String({ pattern: '^[0-9a-f]{64}$', description: "Optional: the request's `digest` as shown; a different one is 409 `CONFLICT` and decides nothing." })),
  },
  { additionalProperties: false },
)
export type DecideInput = Static<typeof DecideBody>

export const AlreadyDecidedSchema = Type.Object(
  {
    error: Type.String(),
    code: Type.Literal('ALREADY_DECIDED'),
    approval: ApprovalSchema,
  },
  { additionalProperties: false, description: 'The request was decided, cancelled or expired already: `approval` is the outcome that stands.' },
)

export const PendingApprovalsQuery = Type.Object(
  { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50, description: '1 to 100 (default 50).' })) },
  { additionalProperties: false },
)
