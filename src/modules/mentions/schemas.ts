// GET /api/v1/mentions: the caller's mentions, newest first.
import { Type, type Static } from 'typebox'
import { Timestamp, Uuid } from '../../schemas/common.ts'
import { MessageRef } from '../../schemas/message.ts'

export const MENTION_PAGE_DEFAULT = 50

export const ListMentionsQuery = Type.Object(
  {
    since: Type.Optional({ ...Timestamp, description: 'Only messages posted after this time (ISO 8601).' }),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: MENTION_PAGE_DEFAULT, description: 'Page size, 1 to 100 (default 50); above 100 is a 400.' })),
    cursor: Type.Optional(Type.String({ format: 'uuid', description: 'The `next_cursor` of the previous page: only messages older than it.' })),
  },
  { additionalProperties: false },
)
export type ListMentionsInput = Static<typeof ListMentionsQuery> & { limit: number }

export const MentionPageSchema = Type.Object(
  {
    messages: Type.Array(MessageRef, { description: 'Messages that mention the caller, newest first, in the channels the caller may read now.' }),
    has_more: Type.Boolean({ description: 'Older mentions exist beyond this page.' }),
    next_cursor: Type.Union([Uuid, Type.Null()], { description: 'Id of the oldest message on the page: pass as `cursor` for the next page. Null when the page is empty.' }),
  },
  { additionalProperties: false },
)
export type MentionPage = Static<typeof MentionPageSchema>
