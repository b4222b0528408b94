// bcrypt on worker threads. bcryptjs's async API only yields every 100 ms, so a cost-12 hash
// (~250 ms of CPU here) still blocks the event loop in 100 ms slices, and a few concurrent logins
// stall every other request for most of a second (measured: scripts/bench/bcrypt-event-loop.ts).
// Here the work runs on a small pool of worker threads (CPUs - 1, at least 1) and the event loop
// only waits for a message. Workers start on first use and do not keep the process alive when idle.
// Checks wait in a fair queue (src/lib/fair-queue.ts) keyed by client address and account: a flood
// of guesses on one account, or from one address, waits behind everybody else's logins and is shed
// first when the queue is full (503 with Retry-After, after a pause), never a newcomer behind it.
import { createHash } from 'node:crypto'
import { createRequire } from 'node:module'
import os from 'node:os'
import { Worker } from 'node:worker_threads'
import { AppError } from './errors.ts'
import { FairQueue } from './fair-queue.ts'

const require = createRequire(import.meta.url)
const BCRYPT_PATH = require.resolve('bcryptjs')

// Plain CommonJS so it runs the same under tsx and from compiled output.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads')
const bcrypt = require(workerData.bcryptPath)
parentPort.on('message', (task) => {
  try {
    const result = task.op === 'hash' ? bcrypt.hashSync(task.password, task.cost) : bcrypt.compareSync(task.password, task.hash)
    parentPort.postMessage({ id: task.id, result })
  } catch (error) {
    parentPort.postMessage({ id: task.id, error: String((error && error.message) || error) })
  }
})
`

type TaskInput = { op: 'hash'; password: string; cost: number } | { op: 'compare'; password: string; hash: string }
type Task = TaskInput & { id: number }

interface Pending {
  task: Task
  keys: readonly string[]
  resolve: (value: string | boolean) => void
  reject: (error: Error) => void
}

interface Slot {
  worker: Worker
  current?: Pending
}

export const BCRYPT_WORKERS = Math.max(1, (os.availableParallelism?.() ?? os.cpus().length) - 1)

const slots: Slot[] = []
let nextId = 1

function spawn(): Slot {
  const slot: Slot = { worker: new Worker(WORKER_SOURCE, { eval: true, workerData: { bcryptPath: BCRYPT_PATH } }) }
  slot.worker.unref()
  slot.worker.on('message', (msg: { id: number; result?: string | boolean; error?: string }) => {
    const done = slot.current
    slot.current = undefined
    slot.worker.unref()
    if (done) queue.done(done.keys)
    if (done && done.task.id === msg.id) {
      if (msg.error !== undefined) done.reject(new Error(msg.error))
      else done.resolve(msg.result as string | boolean)
    }
    pump()
  })
  const fail = (error: Error): void => {
    const index = slots.indexOf(slot)
    if (index >= 0) slots.splice(index, 1)
    if (slot.current) queue.done(slot.current.keys)
    slot.current?.reject(error)
    slot.current = undefined
    pump()
  }
  slot.worker.on('error', fail)
  slot.worker.on('exit', (code) => fail(new Error(`bcrypt worker exited with code ${code}`)))
  slots.push(slot)
  return slot
}

function pump(): void {
  while (queue.size) {
    let slot = slots.find((s) => !s.current)
    if (!slot && slots.length < BCRYPT_WORKERS) slot = spawn()
    if (!slot) return
    const next = queue.next()!.item
    slot.current = next
    // Keep the process alive while work is in flight (a script awaiting a hash must not exit).
    slot.worker.ref()
    slot.worker.postMessage(next.task)
  }
}

/**
 * Password checks waiting for a worker, at most. Beyond it the heaviest client's newest check is
 * shed (503 with Retry-After): a flood of logins would otherwise make every login, the owner's
 * included, wait seconds behind it. 16 per worker is about 4 s of work at cost 12.
 */
export const BCRYPT_QUEUE_LIMIT = BCRYPT_WORKERS * 16
/**
 * Checks of one account, or from one client address, waiting or running, at most: half the queue,
 * so one caller never fills it. A flood within the bound waits its turn (behind everybody else);
 * beyond it, its newest checks are shed.
 */
export const BCRYPT_KEY_LIMIT = BCRYPT_QUEUE_LIMIT / 2
/**
 * A shed check answers 503 after this pause, not at once: a guessing loop that retries at once
 * (an attacker ignores Retry-After) would otherwise spin on 503s and take the event loop and the
 * database from everybody else. The pause holds a socket, not a worker.
 */
export const SHED_DELAY_MS = 1_000

const queue = new FairQueue<Pending>({ limit: BCRYPT_QUEUE_LIMIT, perKeyLimit: BCRYPT_KEY_LIMIT })

/** Who a check is for: its place in the fair queue. Checks without a caller share one key. */
export interface CheckOwner {
  /** The client address of the request. */
  address?: string
  /** The account (a normalised e-mail) whose password is checked or set. */
  account?: string
}

/** The fair queue's keys of a check: the address and the account (the e-mail hashed, never kept in clear). */
export function keysOf(owner: CheckOwner | undefined): string[] {
  const keys: string[] = []
  if (owner?.address) keys.push(`address:${owner.address}`)
  if (owner?.account) keys.push(`account:${createHash('sha256').update(owner.account).digest('hex')}`)
  return keys.length ? keys : ['unattributed']
}

/** Checks waiting for a worker, and the load of one caller's keys (for tests and metrics). */
export function bcryptQueueState(owner?: CheckOwner): { waiting: number; load: number[] } {
  return { waiting: queue.size, load: owner ? keysOf(owner).map((key) => queue.loadOf(key)) : [] }
}

const shedError = (): AppError => new AppError('SERVICE_UNAVAILABLE', 'too many password checks in progress; retry shortly', { headers: { 'retry-after': '1' } })

function run<T extends string | boolean>(task: TaskInput, owner: CheckOwner | undefined): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const pending: Pending = { task: { ...task, id: nextId++ }, keys: keysOf(owner), resolve: resolve as (v: string | boolean) => void, reject }
    for (const shed of queue.push(pending, pending.keys)) setTimeout(() => shed.reject(shedError()), SHED_DELAY_MS)
    pump()
  })
}

export function hashInWorker(password: string, cost: number, owner?: CheckOwner): Promise<string> {
  return run<string>({ op: 'hash', password, cost }, owner)
}

export function compareInWorker(password: string, hash: string, owner?: CheckOwner): Promise<boolean> {
  return run<boolean>({ op: 'compare', password, hash }, owner)
}
