// History for the browser tests, written straight into the database (posting thousands of
// messages through the API would only slow the tests down): ids are UUIDv7 in posting order, as
// the server makes them, and created_at one second apart, ending a minute ago.
import type { FastifyInstance } from 'fastify'
import { uuidv7 } from '../../src/lib/ids.ts'

export interface Author {
  id: string
  name: string
  type: 'AGENT' | 'HUMAN'
}

/** Inserts `count` messages, oldest first; returns their ids in the same order. */
export async function seedMessages(app: FastifyInstance, channelId: string, count: number, write: (i: number) => { author: Author; text: string }): Promise<string[]> {
  const ids: string[] = []
  const end = Date.now() - 60_000
  const CHUNK = 2000
  for (let start = 0; start < count; start += CHUNK) {
    const rows = { id: [] as string[], author: [] as string[], type: [] as string[], name: [] as string[], text: [] as string[], at: [] as string[] }
    for (let i = start; i < Math.min(count, start + CHUNK); i++) {
      const { author, text } = write(i)
      const id = uuidv7()
      ids.push(id)
      rows.id.push(id)
      rows.author.push(author.id)
      rows.type.push(author.type)
      rows.name.push(author.name)
      rows.text.push(text)
      rows.at.push(new Date(end - (count - i) * 1000).toISOString())
    }
    await app.db.pool.query(
      `INSERT INTO messages (id, channel_id, author_id, author_type, author_name, text, created_at)
       SELECT id, $1::uuid, author_id, author_type::actor_type, author_name, text, created_at
         FROM unnest($2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::text[], $7::timestamptz[])
           AS t(id, author_id, author_type, author_name, text, created_at)`,
      [channelId, rows.id, rows.author, rows.type, rows.name, rows.text, rows.at],
    )
  }
  return ids
}
