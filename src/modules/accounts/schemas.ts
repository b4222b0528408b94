import { Type, type Static } from 'typebox'
import { Timestamp, Uuid } from '../../schemas/common.ts'
import { DisplayNameField, EmailField, nullable, PasswordField, UrlField } from './rules.ts'

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

const AvatarUrl = Type.Union([Type.String(), Type.Null()], { description: 'Picture URL (http or https); null when none.' })

const HumanMeProperties = {
  type: Type.Literal('HUMAN'),
  id: Uuid,
  email: Type.String(),
  display_name: Type.String(),
  avatar_url: AvatarUrl,
  role: RoleSchema,
  is_owner: Type.Boolean(),
}

export const HumanMeSchema = Type.Object(HumanMeProperties, { additionalProperties: false })

export const MeSchema = Type.Union(
  [
    HumanMeSchema,
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

export const UpdateMeBodySchema = Type.Object(
  {
    display_name: Type.Optional(DisplayNameField),
    avatar_url: Type.Optional(nullable({ ...UrlField, description: 'An http(s) URL of at most 2048 characters; null removes the picture.' })),
    current_password: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: 'Required with `new_password`: the password in use now.' })),
    new_password: Type.Optional({ ...PasswordField, description: `The new password: at least 12 characters, at most 72 bytes (UTF-8). Requires \`current_password\`.` }),
  },
  { additionalProperties: false, minProperties: 1 },
)

export const UpdatedMeSchema = Type.Object(
  {
    ...HumanMeProperties,
    session: Type.Optional(
      Type.Object(
        {
          token: Type.String({ description: 'JWT (HS256) for `Authorization: Bearer`; valid 24 hours. Replaces the token of this request, which ended with the change.' }),
          expires_at: Timestamp,
        },
        { additionalProperties: false, description: 'Present only when the password changed: every session issued before (this one included) has ended; use this token from now on.' },
      ),
    ),
  },
  { additionalProperties: false, description: 'The caller as GET /api/v1/auth/me shows it after the change (plus `session` after a password change).' },
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
    avatar_url: AvatarUrl,
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
export type UpdateMeBody = Static<typeof UpdateMeBodySchema>
export type UpdatedMe = Static<typeof UpdatedMeSchema>
