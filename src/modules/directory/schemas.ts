// The workspace directory: every agent and every human a caller can talk to or add to a channel.
import { Type, type Static } from 'typebox'

export const DirectoryEntrySchema = Type.Object(
  {
    id: Type.String({ format: 'uuid', description: 'The user or agent id (what `POST /dm` and `POST /channels/{id}/members` take).' }),
    type: Type.Union([Type.Literal('AGENT'), Type.Literal('HUMAN')]),
    name: Type.String({ description: 'Display name.' }),
    handle: Type.Union([Type.String(), Type.Null()], { description: "An agent's unique `name` (letters, digits, hyphens); null for humans." }),
    avatar_url: Type.Union([Type.String(), Type.Null()], { description: 'Picture URL (an agent\'s `avatar_url`, a human\'s from PATCH /api/v1/auth/me); null when none.' }),
    role: Type.Union([Type.Literal('admin'), Type.Literal('member'), Type.Literal('observer')], {
      description: "A human's role. An agent: `admin` for the primary agent (it counts as an admin, docs/access.md), otherwise `member`.",
    }),
    is_owner: Type.Boolean({ description: 'The workspace owner (the bootstrap admin).' }),
    status: Type.Union([Type.Literal('active'), Type.Literal('invited')], {
      description: '`invited`: a human who has not accepted the invite yet (they can already be added to channels and sent messages, and read them once they join).',
    }),
    // ---- presence (docs/decisions.md, "Typing and presence") ----
    online: Type.Union([Type.Boolean(), Type.Null()], { description: 'Whether the agent or human has an open WebSocket on any instance (never null since humans have presence too).' }),
    last_seen_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'When a socket of the agent or human last opened or closed. Null for members that never connected.',
    }),
    status_text: Type.Union([Type.String(), Type.Null()], { description: "An agent's short status (`PUT /agents/me/status`); null when none, expired, or a human." }),
  },
  { additionalProperties: false },
)
export type DirectoryEntry = Static<typeof DirectoryEntrySchema>

export const DirectorySchema = Type.Array(DirectoryEntrySchema, {
  description: 'Agents first, then humans; each group by display name (case-insensitive), then id.',
})
