import { Type, type Static } from 'typebox'
import { Timestamp, Uuid } from '../../schemas/common.ts'
import { nullable } from '../accounts/rules.ts'

export const MAX_RATE_LIMIT_PER_MINUTE = 1_000_000

export const REGISTRATION_MODES = ['open', 'approval', 'closed'] as const
export type RegistrationMode = (typeof REGISTRATION_MODES)[number]
const RegistrationModeField = Type.Enum([...REGISTRATION_MODES], {
  description:
    'Who may create an account with POST /api/v1/auth/register: `open` (active members at once), `approval` (the default: accounts wait for the owner\'s approval and may only call GET /api/v1/auth/me until then), `closed` (403 `REGISTRATION_CLOSED`; humans join by invitation only).',
})

export const WorkspaceSchema = Type.Object(
  {
    instance_id: Uuid,
    bootstrapped_at: Timestamp,
    rate_limit_per_minute: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
      description: 'The workspace setting: API requests per minute for the whole workspace, 0 = unlimited, null = the server default (RATE_LIMIT_PER_MINUTE).',
    }),
    effective_rate_limit_per_minute: Type.Integer({ minimum: 0, description: 'The limit in force now (0 = none).' }),
    registration_mode: RegistrationModeField,
  },
  { additionalProperties: false },
)

export const WorkspacePatchSchema = Type.Object(
  {
    rate_limit_per_minute: Type.Optional(nullable(
      Type.Integer({
        minimum: 0,
        maximum: MAX_RATE_LIMIT_PER_MINUTE,
        description: 'Requests per minute for the whole workspace; 0 turns limiting off; null falls back to the server default.',
      }),
    )),
    registration_mode: Type.Optional(RegistrationModeField),
  },
  { additionalProperties: false, minProperties: 1 },
)

export type WorkspaceDto = Static<typeof WorkspaceSchema>
export type WorkspacePatch = Static<typeof WorkspacePatchSchema>
