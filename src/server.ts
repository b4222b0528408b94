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
import { describeStartupFailure } from './lib/startup-error.ts'

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
  const failed = (error: unknown): never => {
    // One line that names the cause and the fix; the stack only when asked for.
    process.stderr.write(`failed to start: ${describeStartupFailure(error, { databaseUrl, port: config.port, host: config.host })}\n`)
    if ((config.logLevel === 'debug' || config.logLevel === 'trace') && error instanceof Error && error.stack) process.stderr.write(`${error.stack}\n`)
    process.exit(1)
  }
  process.once('uncaughtException', failed)
  if (!databaseUrl) {
    const { startEmbeddedPostgres } = await import('./db/embedded.ts')
    embedded = await startEmbeddedPostgres(config.dataDir, say).catch(failed)
    databaseUrl = embedded.url
  }
  const stopEmbedded = async (error: unknown): Promise<never> => {
    await embedded?.stop().catch(() => {})
    return failed(error)
  }
  if (config.migrateOnStart) {
    const { applied } = await applyMigrations(databaseUrl).catch(stopEmbedded)
    if (applied.length) say(`applied migrations: ${applied.join(', ')}`)
  }
  const jwtSecret = await resolveJwtSecret(config).catch(stopEmbedded)
  const app = await buildApp({ ...config, databaseUrl, jwtSecret }).catch(stopEmbedded)

  // The graceful stop (docs/operations.md, "Stopping an instance") is bounded: whatever still
  // runs at SHUTDOWN_TIMEOUT_MS is left as a kill -9 would leave it, and the process exits 1.
  closeWithGrace(
    {
      delay: config.shutdownTimeoutMs,
      logger: { error: (message: unknown) => app.log.error(message) },
      onTimeout: (delay) => app.log.error(`graceful stop killed by timeout (${delay}ms): exiting with what is left as it is`),
    },
    async ({ signal, err }) => {
      if (err) app.log.error({ err }, 'shutting down after an error')
      else app.log.info({ signal }, 'shutting down')
      await app.close()
      await embedded?.stop()
    },
  )

  await app.listen({ host: config.host, port: config.port }).catch(async (error: unknown) => {
    await app.close().catch(() => {})
    return stopEmbedded(error)
  })
  process.removeListener('uncaughtException', failed)
  if (!config.redisUrl) app.log.info('single-node mode: no REDIS_URL, events are brokered in process')
}

main().catch((error: unknown) => {
  process.stderr.write(`failed to start: ${describeStartupFailure(error)}\n`)
  process.exit(1)
})
