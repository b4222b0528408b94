import { Type, type Static } from 'typebox'
import { Timestamp, Uuid } from '../../schemas/common.ts'
import { DisplayNameField, EmailField, HumanRoleField, PasswordField } from '../accounts/rules.ts'

const TokenField = Type.String({ minLength: 1, maxLength: 200, description: 'The invite token (`inv_…`).' })

export const InviteQuerySchema = Type.Object({ token: TokenField }, { additionalProperties: false })

export const InviteDetailsSchema = Type.Object(
  {
    email: Type.String(),
    display_name: Type.String(),
    role: Type.Enum(['member', 'observer']),
    expires_at: Timestamp,
  },
  { additionalProperties: false },
)

export const AcceptInviteSchema = Type.Object(
  {
    token: TokenField,
    email: Type.Optional(Type.String({ maxLength: 254, description: 'If given, must be the invited address (case-insensitive); otherwise 400 `INVITE_EMAIL_MISMATCH`.' })),
    password: PasswordField,
    display_name: Type.Optional(DisplayNameField),
  },
  { additionalProperties: false },
)

export const CreateInviteSchema = Type.Object(
  {
    email: EmailField,
    display_name: Type.Optional(DisplayNameField),
    role: Type.Optional(HumanRoleField),
  },
  { additionalProperties: false },
)

export const CreatedInviteSchema = Type.Object(
  {
    user_id: Uuid,
    email: Type.String(),
    display_name: Type.String(),
    role: Type.Enum(['member', 'observer']),
    invite_token: Type.String({ description: '`inv_` + 32 random bytes (base64); shown only here.' }),
    invite_url: Type.String({ description: '`{frontend_url}/invite?token=<invite_token>` (token URL-encoded).' }),
    expires_at: Timestamp,
  },
  { additionalProperties: false },
)

export const PendingInviteSchema = Type.Object(
  {
    user_id: Uuid,
    email: Type.String(),
    display_name: Type.String(),
    role: Type.Enum(['member', 'observer']),
    created_at: Timestamp,
    expires_at: Timestamp,
    expired: Type.Boolean({ description: 'True once `expires_at` has passed: the link no longer works; invite the person again (POST /api/v1/invites) for a new one.' }),
  },
  { additionalProperties: false },
)

export const PendingInviteListSchema = Type.Array(PendingInviteSchema, {
  description: 'One item per invited person who has not accepted yet (their latest invite), newest first. Tokens are never listed.',
})

export type InviteDetails = Static<typeof InviteDetailsSchema>
export type AcceptInviteInput = Static<typeof AcceptInviteSchema>
export type CreateInviteInput = Static<typeof CreateInviteSchema>
export type CreatedInvite = Static<typeof CreatedInviteSchema>
export type PendingInvite = Static<typeof PendingInviteSchema>
