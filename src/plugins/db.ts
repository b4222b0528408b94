// Database access for the app: Prisma for repositories, the shared pg pool for raw hot paths,
// and the domain event bus whose outbox lives in the same database.
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { createDatabase, type Database, type DatabaseTimeouts } from '../db/client.ts'
import { DomainEventBus } from '../events/bus.ts'

declare module 'fastify' {
  interface FastifyInstance {
    db: Database
    events: DomainEventBus
  }
}

async function dbPlugin(app: FastifyInstance, opts: { databaseUrl: string; poolSize: number } & DatabaseTimeouts): Promise<void> {
  const db = createDatabase(opts.databaseUrl, opts.poolSize, opts)
  app.decorate('db', db)
  app.decorate('events', new DomainEventBus(db.prisma, app.log))
  app.addHook('onClose', async () => {
    await db.close()
  })
}

export default fp(dbPlugin, { name: 'db' })
