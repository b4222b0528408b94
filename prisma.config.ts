// Prisma CLI configuration (generate, migrate). The server itself reads DATABASE_URL through
// src/config.ts and applies migrations with src/db/migrate.ts.
import { defineConfig } from 'prisma/config'

export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  datasource: { url: process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/ams_dev' },
})
