// bcrypt on worker threads. bcryptjs's async API only yields every 100 ms, so a cost-12 hash
// (~250 ms of CPU here) still blocks the event loop in 100 ms slices, and a few concurrent logins
// stall every other request for most of a second (measured: scripts/bench/bcrypt-event-loop.ts).
// Here the work runs on a small pool of worker threads (CPUs - 1, at least 1) and the event loop
// only waits for a message. Workers start on first use and do not keep the process alive when idle.
import { createRequire } from 'node:module'
import os from 'node:os'
import { Worker } from 'node:worker_threads'
import { AppError } from './errors.ts'

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
  resolve: (value: string | boolean) => void
  reject: (error: Error) => void
}

interface Slot {
  worker: Worker
  current?: Pending
}

export const BCRYPT_WORKERS = Math.max(1, (os.availableParallelism?.() ?? os.cpus().length) - 1)

const slots: Slot[] = []
const queue: Pending[] = []
let nextId = 1

function spawn(): Slot {
  const slot: Slot = { worker: new Worker(WORKER_SOURCE, { eval: true, workerData: { bcryptPath: BCRYPT_PATH } }) }
  slot.worker.unref()
  slot.worker.on('message', (msg: { id: number; result?: string | boolean; error?: string }) => {
    const done = slot.current
    slot.current = undefined
    slot.worker.unref()
    if (done && done.task.id === msg.id) {
      if (msg.error !== undefined) done.reject(new Error(msg.error))
      else done.resolve(msg.result as string | boolean)
    }
    pump()
  })
  const fail = (error: Error): void => {
    const index = slots.indexOf(slot)
    if (index >= 0) slots.splice(index, 1)
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
  while (queue.length) {
    let slot = slots.find((s) => !s.current)
    if (!slot && slots.length < BCRYPT_WORKERS) slot = spawn()
    if (!slot) return
    const next = queue.shift()!
    slot.current = next
    // Keep the process alive while work is in flight (a script awaiting a hash must not exit).
    slot.worker.ref()
    slot.worker.postMessage(next.task)
  }
}

/**
 * Password checks waiting for a worker, at most. Beyond it a check is refused at once (503 with
 * Retry-After) instead of queueing: a flood of logins would otherwise make every login, the
 * owner's included, wait seconds behind it. 16 per worker is about 4 s of work at cost 12.
 */
export const BCRYPT_QUEUE_LIMIT = BCRYPT_WORKERS * 16

const queueFull = (): AppError => new AppError('SERVICE_UNAVAILABLE', 'too many password checks in progress; retry shortly', { headers: { 'retry-after': '1' } })

function run<T extends string | boolean>(task: TaskInput): Promise<T> {
  if (queue.length >= BCRYPT_QUEUE_LIMIT) return Promise.reject(queueFull())
  return new Promise<T>((resolve, reject) => {
    queue.push({ task: { ...task, id: nextId++ }, resolve: resolve as (v: string | boolean) => void, reject })
    pump()
  })
}

export function hashInWorker(password: string, cost: number): Promise<string> {
  return run<string>({ op: 'hash', password, cost })
}

export function compareInWorker(password: string, hash: string): Promise<boolean> {
  return run<boolean>({ op: 'compare', password, hash })
}
