import { Type, type Static } from 'typebox'
import { Timestamp, Uuid } from '../../schemas/common.ts'
import { nullable } from '../accounts/rules.ts'

export const MAX_RATE_LIMIT_PER_MINUTE = 1_000_000

/**
 * Bounds of the loop guard settings (docs/loops.md). The defaults (20 messages, 60 s, depth 20)
 * are the columns' defaults (prisma/schema.prisma); no `default` keyword here, or the validator
 * would fill it into every PATCH and reset the settings it does not mention.
 */
export const LOOP_GUARD_BOUNDS = {
  maxMessages: { minimum: 0, maximum: 1_000 },
  windowSeconds: { minimum: 1, maximum: 86_400 },
  maxDepth: { minimum: 0, maximum: 10_000 },
} as const

const LoopGuardFields = {
  loop_guard_max_messages: Type.Integer({
    ...LOOP_GUARD_BOUNDS.maxMessages,
    description:
      'Loop guard: how many messages agents alone (no human message in between) may post in one channel or thread within `loop_guard_window_seconds`; the next agent post there answers 429 `LOOP_DETECTED` with `Retry-After` until a human speaks there or the window has room. 0 turns the guard off. Default 20.',
  }),
  loop_guard_window_seconds: Type.Integer({
    ...LOOP_GUARD_BOUNDS.windowSeconds,
    description: 'Loop guard: the sliding window, in seconds (1 to 86,400). Default 60.',
  }),
  loop_guard_max_depth: Type.Integer({
    ...LOOP_GUARD_BOUNDS.maxDepth,
    description:
      'Loop guard: the longest chain of agent messages each posted in reply to the previous one (`in_reply_to_event`); an agent post that would be deeper answers 429 `LOOP_DETECTED`. A human message starts over at 0. 0 turns the cap off. Default 20.',
  }),
}

export const REGISTRATION_MODES = ['open', 'approval', 'closed'] as const
export type RegistrationMode = (typeof REGISTRATION_MODES)[number]
export const RegistrationModeField = Type.Enum([...REGISTRATION_MODES], {
  description:
    "Who may create an account with POST /api/v1/auth/register: `open` (active members at once), `approval` (the default: accounts wait for the owner's approval and may only call GET /api/v1/auth/me until then), `closed` (403 `REGISTRATION_CLOSED`; humans join by invitation only).",
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
    ...LoopGuardFields,
    max_file_bytes: Type.Integer({ minimum: 1, description: 'The largest file a message may carry, in bytes (`MAX_FILE_BYTES`; 10,485,760 by default). Larger uploads answer 413.' }),
  },
  { additionalProperties: false },
)

export const WorkspacePatchSchema = Type.Object(
  {
    rate_limit_per_minute: Type.Optional(
      nullable(
        Type.Integer({
          minimum: 0,
          maximum: MAX_RATE_LIMIT_PER_MINUTE,
          description: 'Requests per minute for the whole workspace; 0 turns limiting off; null falls back to the server default.',
        }),
      ),
    ),
    registration_mode: Type.Optional(RegistrationModeField),
    loop_guard_max_messages: Type.Optional(LoopGuardFields.loop_guard_max_messages),
    loop_guard_window_seconds: Type.Optional(LoopGuardFields.loop_guard_window_seconds),
    loop_guard_max_depth: Type.Optional(LoopGuardFields.loop_guard_max_depth),
  },
  { additionalProperties: false, minProperties: 1 },
)

export type WorkspaceDto = Static<typeof WorkspaceSchema>
export type WorkspacePatch = Static<typeof WorkspacePatchSchema>
