// Channels and memberships: request bodies and response objects.
import { Type, type Static } from 'typebox'
import { Timestamp, Uuid } from '../../schemas/common.ts'

export const ChannelName = Type.String({
  minLength: 1,
  maxLength: 100,
  pattern: '^(?! *$)[A-Za-z0-9 -]+$',
  description: 'Letters, digits, hyphens and spaces; 1 to 100 characters; not only spaces. Unique among channels ignoring case (409 `NAME_TAKEN`). Leading and trailing spaces are trimmed.',
})
const Description = Type.String({ maxLength: 1000, description: 'Up to 1,000 characters.' })
const Topic = Type.String({ maxLength: 250, description: 'Up to 250 characters.' })
export const MemberType = Type.Union([Type.Literal('AGENT'), Type.Literal('HUMAN')])
export const ChannelType = Type.Union([Type.Literal('channel'), Type.Literal('dm')])

const PRIVATE_NOTE =
  'Private: hidden from the channel browser, joined only when a member adds you. Public (false): listed by GET /api/v1/channels/browse and open to anyone of the workspace to join (docs/access.md).'
const Private = Type.Boolean({ description: PRIVATE_NOTE })

export const CreateChannelBody = Type.Object(
  { name: ChannelName, description: Type.Optional(Description), topic: Type.Optional(Topic), private: Type.Optional(Type.Boolean({ description: `${PRIVATE_NOTE} Default false.` })) },
  { additionalProperties: false },
)
export type CreateChannelInput = Static<typeof CreateChannelBody>

export const UpdateChannelBody = Type.Object(
  { name: Type.Optional(ChannelName), description: Type.Optional(Description), topic: Type.Optional(Type.Union([Topic, Type.Null()])), private: Type.Optional(Private) },
  { additionalProperties: false, minProperties: 1 },
)
export type UpdateChannelInput = Static<typeof UpdateChannelBody>

export const ChannelSchema = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    description: Type.String(),
    topic: Type.Union([Type.String(), Type.Null()]),
    type: ChannelType,
    private: Type.Boolean({ description: `${PRIVATE_NOTE} Always true for a DM.` }),
    created_at: Timestamp,
    updated_at: Timestamp,
    created_by: Type.Union([Uuid, Type.Null()], { description: 'Id of the user or agent who created it.' }),
    member_count: Type.Integer({ minimum: 0 }),
    is_member: Type.Boolean({ description: 'Whether the caller is a member (false for the workspace owner reading a channel it has not joined).' }),
    participants: Type.Optional(Type.Array(Uuid, { description: 'DMs only: the two participant ids.' })),
  },
  { additionalProperties: false },
)
export type ChannelDto = Static<typeof ChannelSchema>

/**
 * Unread counts stop here: counting further is what made the sidebar costly under load (every
 * open page asks for it), and past this a person reads "many" anyway (the web UI shows "99+").
 */
export const UNREAD_COUNT_MAX = 100

export const UnreadCount = Type.Integer({
  minimum: 0,
  maximum: UNREAD_COUNT_MAX,
  description: `Messages after the caller's read marker not written by the caller, counted up to ${UNREAD_COUNT_MAX}: exact below it, ${UNREAD_COUNT_MAX} means ${UNREAD_COUNT_MAX} or more (0 where the caller is not a member).`,
})
export const LastMessageAt = Type.Union([Timestamp, Type.Null()], {
  description:
    "When the channel's newest message was posted (its last activity; a client moves it forward from `new_message` frames); null when it has none. Millisecond precision, from the message id (UUIDv7).",
})
export const LastRead = Type.Union([Uuid, Type.Null()], { description: 'The newest message the caller has marked read here (`PUT …/read`); null if none.' })

export const MarkReadBody = Type.Object(
  { message_id: Type.String({ format: 'uuid', description: 'A message of this channel: everything up to it counts as read. The marker never moves backwards.' }) },
  { additionalProperties: false },
)
export const ReadStateSchema = Type.Object({ channel_id: Uuid, last_read_message_id: LastRead, unread_count: UnreadCount }, { additionalProperties: false })
export type ReadStateDto = Static<typeof ReadStateSchema>

export const ChannelListItem = Type.Object(
  {
    id: Uuid,
    name: Type.String({ description: "For a DM: the other participant's display name." }),
    type: ChannelType,
    description: Type.String(),
    private: Type.Boolean({ description: 'Private channel (true for a DM): hidden from the channel browser.' }),
    unread_count: UnreadCount,
    last_read_message_id: LastRead,
    is_member: Type.Boolean({ description: 'Whether the caller is a member (false: the workspace owner reading a regular channel it has not joined).' }),
    last_message_at: LastMessageAt,
  },
  { additionalProperties: false },
)
export const ChannelListSchema = Type.Array(ChannelListItem, { description: 'Oldest first.' })
export type ChannelListItemDto = Static<typeof ChannelListItem>

export const BrowseQuery = Type.Object(
  { q: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Only channels whose name contains this text, ignoring case.' })) },
  { additionalProperties: false },
)

export const PublicChannelSchema = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    description: Type.String(),
    topic: Type.Union([Type.String(), Type.Null()]),
    created_at: Timestamp,
    member_count: Type.Integer({ minimum: 0 }),
    is_member: Type.Boolean({ description: 'Whether the caller is a member already (else POST /api/v1/channels/{id}/join).' }),
  },
  { additionalProperties: false },
)
export const PublicChannelListSchema = Type.Array(PublicChannelSchema, { description: 'Public channels, by name (ignoring case). Private channels and DMs are never listed.' })
export type PublicChannelDto = Static<typeof PublicChannelSchema>

export const MemberSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid', description: 'The user or agent id.' }),
    user_id: Type.String({ format: 'uuid', description: 'The same id, under the name the member endpoints use (`{user_id}`).' }),
    type: MemberType,
    name: Type.String({ description: 'Display name.' }),
    joined_at: Timestamp,
  },
  { additionalProperties: false },
)
export type MemberDto = Static<typeof MemberSchema>
export const MemberListSchema = Type.Array(MemberSchema, { description: 'In joining order.' })

export const AddedMemberSchema = Type.Object(
  {
    channel_id: Uuid,
    id: Type.String({ format: 'uuid', description: 'The user or agent id.' }),
    user_id: Type.String({ format: 'uuid', description: 'The same id, under the name the member endpoints use (`{user_id}`).' }),
    type: MemberType,
    name: Type.String(),
    joined_at: Timestamp,
  },
  { additionalProperties: false },
)
export type AddedMemberDto = Static<typeof AddedMemberSchema>

export const AddMemberBody = Type.Object({ user_id: Type.String({ format: 'uuid', description: 'Id of a user or an agent.' }) }, { additionalProperties: false })

export const MemberParams = Type.Object({ id: Uuid, user_id: Uuid }, { additionalProperties: false })
