# Multi-stage image of the agent messaging service (README "Docker", docs/operations.md).
#   docker build -t agent-messaging-service .
# Behind a TLS-inspecting proxy, give `npm ci` the proxy's root certificate (PEM text; a CA
# certificate is public, and the build stage that sees it is not part of the image):
#   docker build --build-arg EXTRA_CA_CERT="$(cat corporate-root.pem)" -t agent-messaging-service .

# --- build: install exactly the lockfile, generate the Prisma client, compile src/ to dist/ -----
FROM node:20-slim AS build
WORKDIR /app
ENV CHECKPOINT_DISABLE=1 PRISMA_HIDE_UPDATE_MESSAGE=1
ARG EXTRA_CA_CERT=""
# What `npm ci` needs, including its postinstall (prisma generate, offline; the web UI's Vite
# build into dist/web, which reads src/web and src/sdk).
COPY package.json package-lock.json prisma.config.ts tsconfig.json tsconfig.build.json ./
COPY scripts/prisma-generate.mjs scripts/schema-engine-placeholder.sh scripts/build-web.mjs ./scripts/
COPY prisma ./prisma
COPY src ./src
# The examples the OpenAPI document shows (captured from the tests), read by the server at start.
COPY openapi/examples.json ./openapi/
RUN if [ -n "$EXTRA_CA_CERT" ]; then \
      printf '%s\n' "$EXTRA_CA_CERT" > /tmp/extra-ca.pem && export NODE_EXTRA_CA_CERTS=/tmp/extra-ca.pem; \
    fi \
 && npm ci --no-audit --no-fund \
 && rm -f /tmp/extra-ca.pem
# Then keep only what runs: production dependencies without optional ones (the embedded
# PostgreSQL binaries; the image takes DATABASE_URL), and of Prisma's runtime only the
# PostgreSQL query compiler the generated client loads.
RUN npm run build \
 && npm prune --omit=dev --omit=optional --no-audit --no-fund \
 && find node_modules/@prisma/client/runtime -type f \( -name '*.map' -o -name '*cockroachdb*' -o -name '*mysql*' \
      -o -name '*sqlite*' -o -name '*sqlserver*' -o -name 'query_compiler_small_bg*' -o -name 'wasm-compiler-edge*' \) -delete

# --- runtime: compiled server, production dependencies, migrations; unprivileged ---------------
FROM node:20-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/data
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/openapi/examples.json ./openapi/examples.json
# Applied at start (MIGRATE_ON_START) by dist/db/migrate.ts, which finds them from dist/.
COPY --from=build /app/prisma/migrations ./prisma/migrations
# DATA_DIR holds uploads (DATA_DIR/uploads) and, when JWT_SECRET is unset, the generated secret.
RUN mkdir -p /data/uploads && chown -R node:node /data
USER node
VOLUME ["/data"]
EXPOSE 3000
# Readiness, not liveness: unhealthy while PostgreSQL (or Redis, when REDIS_URL is set) is
# unreachable or the server is shutting down.
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/health/ready').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# Exec form: SIGTERM from `docker stop` reaches node directly (graceful shutdown). The young
# generation is fixed at 2 × 64 MB, as `npm start` does (README, Performance).
CMD ["node", "--min-semi-space-size=64", "--max-semi-space-size=64", "dist/server.js"]
