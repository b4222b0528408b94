// SQL of mentions: who in a channel can be mentioned, and the messages that mention a member.
import type { FastifyInstance } from 'fastify'
import type { Mentionable } from '../../lib/mentions.ts'
import { messageRecord, PAGE_COLUMNS } from '../messages/repo.ts'
import type { MessageRecord } from '../messages/schemas.ts'

/** The members of a channel with what they are mentioned by (an agent's name, a human's display name). */
export async function channelMentionables(app: FastifyInstance, channelId: string): Promise<Mentionable[]> {
  const { rows } = await app.db.pool.query<Mentionable>({
    name: 'mentionable-members',
    text: `SELECT m.member_id::text AS id, m.member_type::text AS type, coalesce(a.name, u.display_name, '') AS name
             FROM channel_members m
             LEFT JOIN agents a ON m.member_type = 'AGENT' AND a.id = m.member_id
             LEFT JOIN users u ON m.member_type = 'HUMAN' AND u.id = m.member_id
            WHERE m.channel_id = $1`,
    values: [channelId],
  })
  return rows
}

/**
 * The messages of `channelIds` that mention `memberId`, newest first: `take` of them older than
 * the message `before` (when given) and posted after `since` (when given).
 */
export async function mentionsOf(
  app: FastifyInstance,
  memberId: string,
  channelIds: string[],
  page: { take: number; before?: string; since?: Date },
): Promise<MessageRecord[]> {
  const { rows } = await app.db.pool.query<Parameters<typeof messageRecord>[0]>({
    name: 'mentions-of-member',
    text: `SELECT ${PAGE_COLUMNS} FROM messages m LEFT JOIN attachments a ON a.message_id = m.id
            WHERE m.mentions @> ARRAY[$1::uuid] AND m.channel_id = ANY($2::uuid[])
              AND ($3::uuid IS NULL OR m.id < $3::uuid)
              AND ($4::timestamptz IS NULL OR m.created_at > $4::timestamptz)
            ORDER BY m.id DESC LIMIT $5`,
    values: [memberId, channelIds, page.before ?? null, page.since ?? null, page.take],
  })
  return rows.map(messageRecord)
}
