import { Type, type Static } from 'typebox'
import { Timestamp, Uuid } from '../../schemas/common.ts'
import { nullable } from '../accounts/rules.ts'

export const MAX_RATE_LIMIT_PER_MINUTE = 1_000_000

/**
 * Bounds of the loop guard settings (docs/loops.md). The defaults (on, 20 turns, 60 s, depth 20)
 * are the columns' defaults (prisma/schema.prisma); no `default` keyword here, or the validator
 * would fill it into every PATCH and reset the settings it does not mention.
 */
export const LOOP_GUARD_BOUNDS = {
  maxTurns: { minimum: 1, maximum: 1_000 },
  windowSeconds: { minimum: 1, maximum: 86_400 },
  maxDepth: { minimum: 0, maximum: 10_000 },
} as const

/** The answer to a PATCH that still names the setting the turn limit replaced (issue 28). */
export const LOOP_GUARD_MAX_MESSAGES_RENAMED =
  "'loop_guard_max_messages' was replaced by 'loop_guard_max_turns' (the guard now counts turns: changes of author between agents that answer each other, not messages) and 'loop_guard_enabled' (on/off); see docs/loops.md"

const LoopGuardFields = {
  loop_guard_enabled: Type.Boolean({
    description: 'Loop protection on (the default) or off: the turn limit and the chain cap (`loop_guard_max_depth`) together.',
  }),
  loop_guard_max_turns: Type.Integer({
    ...LOOP_GUARD_BOUNDS.maxTurns,
    description:
      'Loop guard: how many turns one pair of agents may take in one channel or thread within `loop_guard_window_seconds` with no human message in between. A turn is an agent post that follows, within the window, a message by another agent that the poster could have been answering (it listens through a webhook, an integration or a socket); a turn of another pair starts the count over. One agent posting any number of messages in a row takes no turn. The post that would be one turn too many answers 429 `LOOP_DETECTED` with `Retry-After`. Default 20.',
  }),
  loop_guard_window_seconds: Type.Integer({
    ...LOOP_GUARD_BOUNDS.windowSeconds,
    description: 'Loop guard: the sliding window, in seconds (1 to 86,400). Default 60.',
  }),
  loop_guard_max_depth: Type.Integer({
    ...LOOP_GUARD_BOUNDS.maxDepth,
    description:
      'Loop guard: the longest chain of agent messages each posted in reply to the previous one (`in_reply_to_event`), one agent answering itself included; an agent post that would be deeper answers 429 `LOOP_DETECTED`. A human message starts over at 0. 0 turns the cap off. Default 20.',
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
    loop_guard_enabled: Type.Optional(LoopGuardFields.loop_guard_enabled),
    loop_guard_max_turns: Type.Optional(LoopGuardFields.loop_guard_max_turns),
    loop_guard_max_messages: Type.Optional(
      Type.Unknown({ deprecated: true, description: 'Replaced by `loop_guard_max_turns` and `loop_guard_enabled`; naming it answers 400 `VALIDATION_ERROR` saying so.' }),
    ),
    loop_guard_window_seconds: Type.Optional(LoopGuardFields.loop_guard_window_seconds),
    loop_guard_max_depth: Type.Optional(LoopGuardFields.loop_guard_max_depth),
  },
  { additionalProperties: false, minProperties: 1 },
)

export type WorkspaceDto = Static<typeof WorkspaceSchema>
export type WorkspacePatch = Static<typeof WorkspacePatchSchema>
