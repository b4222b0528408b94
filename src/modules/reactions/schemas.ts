// Reactions on a message: the route parameters and the answer of PUT.
import { Type, type Static } from 'typebox'
import { Uuid } from '../../schemas/common.ts'
import { ReactionSummarySchema } from '../../schemas/message.ts'
import { MAX_EMOJI_LENGTH } from './emoji.ts'

export const ReactionParams = Type.Object(
  {
    id: Uuid,
    message_id: Uuid,
    emoji: Type.String({
      minLength: 1,
      maxLength: MAX_EMOJI_LENGTH,
      description: 'One emoji, URL-encoded (`%F0%9F%91%80` for 👀), or a shortcode `:name:` (1-32 of `a-z 0-9 _ + -`). Anything else: 400 `INVALID_EMOJI`.',
    }),
  },
  { additionalProperties: false },
)

export const MessageReactionsSchema = Type.Object(
  {
    channel_id: Uuid,
    message_id: Uuid,
    reactions: Type.Array(ReactionSummarySchema, { description: "The message's reactions after the change, as the caller sees them." }),
  },
  { additionalProperties: false },
)
export type MessageReactions = Static<typeof MessageReactionsSchema>
