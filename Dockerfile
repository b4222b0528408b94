# syntax=docker/dockerfile:1
# Multi-stage image of the agent messaging service. Not built on the machine it was written on
# (no Docker engine there); see README "Docker".

# --- build: install exactly the lockfile, generate the Prisma client, compile TypeScript ---------
FROM node:20-slim AS build
WORKDIR /app
ENV CHECKPOINT_DISABLE=1 PRISMA_HIDE_UPDATE_MESSAGE=1
# What `npm ci` needs, including its postinstall (prisma generate, offline).
COPY package.json package-lock.json prisma.config.ts ./
COPY scripts/prisma-generate.mjs scripts/schema-engine-placeholder.sh ./scripts/
COPY prisma ./prisma
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
COPY scripts ./scripts
COPY test ./test
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

# --- runtime: production dependencies and compiled output, unprivileged --------------------------
FROM node:20-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/data
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/prisma ./prisma
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# SIGTERM from `docker stop` reaches node directly (exec form): graceful shutdown. The young
# generation is fixed at 2 × 64 MB, as `npm start` does (README, Performance).
CMD ["node", "--min-semi-space-size=64", "--max-semi-space-size=64", "dist/src/server.js"]
