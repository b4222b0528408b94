#!/bin/sh
# Placeholder for Prisma's native schema engine (see scripts/prisma-generate.mjs). Migrations are
# applied by the server itself (src/db/migrate.ts); to write a new migration offline, use a schema
# engine of your own (PRISMA_SCHEMA_ENGINE_BINARY) or an online `npx prisma migrate dev`.
echo "schema engine not available: see scripts/prisma-generate.mjs" >&2
exit 1
