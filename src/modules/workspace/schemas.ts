import { Type, type Static } from 'typebox'
import { Timestamp, Uuid } from '../../schemas/common.ts'
import { nullable } from '../accounts/rules.ts'

export const MAX_RATE_LIMIT_PER_MINUTE = 1_000_000

export const WorkspaceSchema = Type.Object(
  {
    instance_id: Uuid,
    bootstrapped_at: Timestamp,
    rate_limit_per_minute: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
      description: 'The workspace setting: API requests per minute for the whole workspace, 0 = unlimited, null = the server default (RATE_LIMIT_PER_MINUTE).',
    }),
    effective_rate_limit_per_minute: Type.Integer({ minimum: 0, description: 'The limit in force now (0 = none).' }),
  },
  { additionalProperties: false },
)

export const WorkspacePatchSchema = Type.Object(
  {
    rate_limit_per_minute: nullable(
      Type.Integer({
        minimum: 0,
        maximum: MAX_RATE_LIMIT_PER_MINUTE,
        description: 'Requests per minute for the whole workspace; 0 turns limiting off; null falls back to the server default.',
      }),
    ),
  },
  { additionalProperties: false },
)

export type WorkspaceDto = Static<typeof WorkspaceSchema>
export type WorkspacePatch = Static<typeof WorkspacePatchSchema>
