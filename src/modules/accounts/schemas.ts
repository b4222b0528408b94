import { Type, type Static } from 'typebox'
import { Timestamp, Uuid } from '../../schemas/common.ts'
import { DisplayNameField, EmailField, PasswordField } from './rules.ts'

export const RoleSchema = Type.Enum(['admin', 'member', 'observer'])

export const RegisterBodySchema = Type.Object({ email: EmailField, password: PasswordField, display_name: DisplayNameField }, { additionalProperties: false })

export const RegisteredUserSchema = Type.Object(
  {
    id: Uuid,
    email: Type.String(),
    display_name: Type.String(),
    role: RoleSchema,
    created_at: Timestamp,
  },
  { additionalProperties: false },
)

export const LoginBodySchema = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: 254 }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
  },
  { additionalProperties: false },
)

export const SessionSchema = Type.Object(
  {
    token: Type.String({ description: 'JWT (HS256) for `Authorization: Bearer`; valid 24 hours.' }),
    user_id: Uuid,
    email: Type.String(),
    display_name: Type.String(),
    role: RoleSchema,
    is_owner: Type.Boolean(),
    expires_at: Timestamp,
  },
  { additionalProperties: false },
)

export const MeSchema = Type.Union(
  [
    Type.Object(
      {
        type: Type.Literal('HUMAN'),
        id: Uuid,
        email: Type.String(),
        display_name: Type.String(),
        role: RoleSchema,
        is_owner: Type.Boolean(),
      },
      { additionalProperties: false },
    ),
    Type.Object(
      {
        type: Type.Literal('AGENT'),
        id: Uuid,
        name: Type.String(),
        display_name: Type.String(),
        key_id: Uuid,
      },
      { additionalProperties: false },
    ),
  ],
  { description: 'The caller: a human (JWT) or an agent (API key).' },
)

export const RegistrationListSchema = Type.Object(
  { registrations: Type.Array(RegisteredUserSchema, { description: 'Self-registered accounts awaiting approval, oldest first.' }) },
  { additionalProperties: false },
)

export const PersonSchema = Type.Object(
  {
    id: Uuid,
    email: Type.String(),
    display_name: Type.String(),
    role: RoleSchema,
    is_owner: Type.Boolean({ description: 'The workspace owner (the human admin created by bootstrap).' }),
    created_at: Timestamp,
  },
  { additionalProperties: false },
)

export const PeopleListSchema = Type.Array(PersonSchema, {
  description: 'The humans with an active account (invited people who have not accepted, and registrations awaiting approval, are not listed), by display name.',
})

export type RegistrationList = Static<typeof RegistrationListSchema>
export type Person = Static<typeof PersonSchema>
export type RegisterBody = Static<typeof RegisterBodySchema>
export type RegisteredUser = Static<typeof RegisteredUserSchema>
export type LoginBody = Static<typeof LoginBodySchema>
export type Session = Static<typeof SessionSchema>
export type Me = Static<typeof MeSchema>
