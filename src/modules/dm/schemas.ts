// Direct messages: a channel of type `dm` with exactly two participants.
import { Type, type Static } from 'typebox'
import { LastMessageAt, LastRead, UnreadCount } from '../channels/schemas.ts'
import { Timestamp, Uuid } from '../../schemas/common.ts'

export const CreateDmBody = Type.Object({ participant_id: Type.String({ format: 'uuid', description: 'Id of a user or an agent (not the caller).' }) }, { additionalProperties: false })

export const DmSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid', description: 'The DM channel id: post and read with the message endpoints.' }),
    type: Type.Literal('dm'),
    participants: Type.Array(Uuid, { minItems: 2, maxItems: 2, description: 'The two participant ids, sorted.' }),
    participant: Type.Object(
      {
        id: Uuid,
        name: Type.String({ description: 'Display name.' }),
        type: Type.Union([Type.Literal('AGENT'), Type.Literal('HUMAN')]),
      },
      { additionalProperties: false, description: 'The other participant (not the caller).' },
    ),
    created_at: Timestamp,
  },
  { additionalProperties: false },
)
export type DmDto = Static<typeof DmSchema>
export const DmListItem = Type.Object({ ...DmSchema.properties, unread_count: UnreadCount, last_read_message_id: LastRead, last_message_at: LastMessageAt }, { additionalProperties: false })
export type DmListItemDto = Static<typeof DmListItem>
export const DmListSchema = Type.Array(DmListItem, { description: 'Oldest first.' })
