// SQL of mentions: who in a channel can be mentioned (the messages that mention a member are
// read by the messages repo, mentionsOf).
import type { ServiceContext } from '../context.ts'
import type { Mentionable } from '../../lib/mentions.ts'

/** The members of a channel with what they are mentioned by (an agent's name, a human's display name). */
export async function channelMentionables(ctx: ServiceContext, channelId: string): Promise<Mentionable[]> {
  const { rows } = await ctx.db.pool.query<Mentionable>({
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
