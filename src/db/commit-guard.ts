// A change commits only while its caller is still waiting for it, so that "the database did not
// answer" (503 SERVICE_UNAVAILABLE) means nothing was stored.
//
// Why a client-side timeout alone is not enough: when PostgreSQL is frozen (SIGSTOP, a stalled
// disk, a VM paused) the statement's bytes already sit in its socket buffer. node-postgres writes
// Parse/Bind/Execute/Sync in one go, and the Sync commits an autocommit statement; its
// query_timeout only stops waiting. On thaw PostgreSQL reads the statement and commits it, after
// the client was told it failed. statement_timeout does not help either: its clock starts when
// PostgreSQL starts the statement, after the thaw.
//
// What this module does, on every pooled connection (guardClient):
// - A statement sent outside a transaction block is sent with Flush instead of Sync (the
//   extended protocol keeps its implicit transaction open until Sync). The Sync, which commits,
//   goes out only once PostgreSQL has answered the statement, within the timeout. Cost: one
//   more round trip per autocommit statement (measured: docs/decisions.md, issue 30).
// - When the timeout runs out, the connection is destroyed at once; nothing more is sent on it.
//   A statement whose Sync was not sent, or one inside a transaction block (BEGIN … COMMIT) other
//   than the COMMIT itself, can then only be rolled back: PostgreSQL meets the end of the
//   connection before any commit.
// - Only a cut-off after the commit was asked for (the Sync, or a COMMIT statement) leaves the
//   outcome unknown: the error says so (`outcome: 'unknown'`), and the API answers 503
//   OUTCOME_UNKNOWN instead of SERVICE_UNAVAILABLE (src/lib/outage.ts). The same holds when the
//   connection breaks instead of timing out.
// - A statement its caller declares read-only (`readOnly: true` in the query config: a plain
//   SELECT that calls no function that writes) has nothing to commit: it goes out with its Sync
//   at once, one round trip, and a cut-off leaves nothing behind. The sidebar statement, which
//   every open page asks for, is one (docs/decisions.md, issue 24, "one round trip").
// The timeout replaces pg's own query_timeout (which would leave the statement to commit).
import pg from 'pg'

/** What a query cut off before PostgreSQL answered may have left behind. */
export type CutOffOutcome = 'nothing' | 'unknown'

/**
 * A query PostgreSQL did not answer within the timeout, or whose connection broke while its
 * commit was pending. `outcome` says whether anything can have been committed.
 */
export class UnansweredQueryError extends Error {
  override readonly name = 'UnansweredQueryError'
  constructor(
    message: string,
    readonly outcome: CutOffOutcome,
    cause?: unknown,
  ) {
    super(`${message}; ${outcome === 'unknown' ? 'outcome unknown: it may have been committed' : 'nothing was committed'}`, { cause })
  }
}

/**
 * How a statement is sent and what a cut-off leaves behind:
 * - `deferred`: outside a transaction block; committed by a Sync sent only after its answer;
 * - `uncommitted`: inside a transaction block, or opening one; a cut-off rolls it back;
 * - `committing`: a COMMIT, or an autocommit statement that cannot be deferred (several
 *   statements in one text, COPY); a cut-off after it was sent leaves the outcome unknown;
 * - `reads`: outside a transaction block, declared read-only by its caller; sent with its Sync,
 *   and a cut-off leaves nothing behind (there is nothing to commit).
 */
export type SendPlan = 'deferred' | 'uncommitted' | 'committing' | 'reads'

const OPENS_BLOCK = /^\s*(BEGIN|START\s+TRANSACTION)\b/i
const COMMITS = /^\s*(COMMIT|END|PREPARE\s+TRANSACTION)\b/i
const ROLLS_BACK = /^\s*(ROLLBACK|ABORT)\b/i
const COPY = /^\s*COPY\b/i

/**
 * The plan for `text` sent when the connection's transaction status is `status` ('I', 'T', 'E');
 * `readOnly`: its caller says it writes nothing (trusted: nothing in the text can prove it).
 */
export function planOf(text: string | undefined, values: unknown[] | undefined, status: string | null, readOnly = false): SendPlan {
  const sql = text ?? ''
  if (COMMITS.test(sql)) return 'committing'
  if (status === 'T' || status === 'E') return 'uncommitted'
  if (status !== 'I') return 'committing'
  if (OPENS_BLOCK.test(sql) || ROLLS_BACK.test(sql)) return 'uncommitted'
  if (readOnly) return 'reads'
  if (COPY.test(sql)) return 'committing'
  // Without parameters several statements may share one text (simple protocol only).
  if (!values?.length && /;\s*\S/.test(sql.replace(/;\s*$/, ''))) return 'committing'
  return 'deferred'
}

/** Added to a query config: the statement writes nothing, so it goes out in one round trip. */
export interface ReadOnly {
  readOnly: true
}

/** The parts of node-postgres's connection and query this module drives (not in its types). */
interface Wire {
  execute(options: { portal: string; rows?: number }): void
  flush(): void
  sync(): void
  stream: { destroy(): void }
}

type Callback = (error: Error | null, result?: unknown) => void

interface QueryInternals {
  text?: string
  values?: unknown[]
  rows?: number
  portal: string
  callback?: Callback
  submit(connection: Wire): Error | null | undefined
  requiresPreparation(): boolean
  _getRows(connection: Wire, rows?: number): void
  handleCommandComplete(message: unknown, connection: Wire): void
  handleEmptyQuery(connection: Wire): void
  handleError(error: Error, connection: Wire): void
  handleReadyForQuery(connection: Wire): void
}

const PgQuery = pg.Query as unknown as new (config: unknown, values?: unknown) => QueryInternals

type Phase = 'queued' | 'sent' | 'committing' | 'refused' | 'done'

/** node-postgres's Query, sending autocommit statements with their commit held back. */
class GuardedQuery extends PgQuery {
  plan: SendPlan = 'committing'
  phase: Phase = 'queued'
  /** Timed out: nothing more may be sent for it (above all not its Sync). */
  abandoned = false

  /** Declared read-only by its caller (`readOnly: true` in the query config). */
  private readonly readOnly: boolean

  constructor(
    private readonly client: pg.ClientBase,
    config: unknown,
    values?: unknown,
  ) {
    super(config, values)
    this.readOnly = typeof config === 'object' && config !== null && (config as { readOnly?: unknown }).readOnly === true
  }

  override submit(connection: Wire): Error | null | undefined {
    if (this.abandoned) return new Error('query abandoned: it timed out before it could be sent')
    this.plan = planOf(this.text, this.values, this.client.getTransactionStatus(), this.readOnly)
    this.phase = 'sent'
    return super.submit(connection)
  }

  override requiresPreparation(): boolean {
    return this.plan === 'deferred' || super.requiresPreparation()
  }

  override _getRows(connection: Wire, rows?: number): void {
    if (this.plan !== 'deferred' || rows) return super._getRows(connection, rows)
    connection.execute({ portal: this.portal, rows })
    connection.flush()
  }

  override handleCommandComplete(message: unknown, connection: Wire): void {
    super.handleCommandComplete(message, connection)
    this.commit(connection)
  }

  override handleEmptyQuery(connection: Wire): void {
    super.handleEmptyQuery(connection)
    this.commit(connection)
  }

  override handleError(error: Error, connection: Wire): void {
    // PostgreSQL refused the statement and now waits for a Sync, which rolls it back.
    if (this.plan === 'deferred' && this.phase === 'sent' && !this.abandoned && error instanceof pg.DatabaseError) {
      this.phase = 'refused'
      connection.sync()
    }
    super.handleError(error, connection)
  }

  override handleReadyForQuery(connection: Wire): void {
    this.phase = 'done'
    super.handleReadyForQuery(connection)
  }

  private commit(connection: Wire): void {
    if (this.plan !== 'deferred' || this.phase !== 'sent' || this.abandoned) return
    this.phase = 'committing'
    connection.sync()
  }

  /** What cutting the query off now leaves behind. */
  outcome(): CutOffOutcome {
    if (this.phase === 'queued' || this.phase === 'refused' || this.plan === 'uncommitted' || this.plan === 'reads') return 'nothing'
    if (this.plan === 'deferred') return this.phase === 'committing' ? 'unknown' : 'nothing'
    return 'unknown'
  }
}

type QueryFunction = (config: unknown, values?: unknown, callback?: unknown) => unknown

/**
 * Sends every query of `client` through GuardedQuery, bounded by `timeoutMs` (0: no bound).
 * A query given as a ready-made submittable (a cursor) goes out as it is.
 */
export function guardClient(client: pg.ClientBase, timeoutMs: number): void {
  const send = client.query.bind(client) as QueryFunction
  const wire = (client as unknown as { connection: Wire }).connection
  const guarded: QueryFunction = (config, values, callback) => {
    if (config && typeof (config as { submit?: unknown }).submit === 'function') return send(config, values, callback)
    if (typeof values === 'function') {
      callback = values
      values = undefined
    }
    const query = new GuardedQuery(client, config, values)
    let answer!: Callback
    const result = typeof callback === 'function' ? undefined : new Promise((resolve, reject) => (answer = (error, rows) => (error ? reject(error) : resolve(rows))))
    if (typeof callback === 'function') answer = callback as Callback
    let settled = false
    let timer: NodeJS.Timeout | undefined
    const settle: Callback = (error, rows) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      answer(error, rows)
    }
    query.callback = (error, rows) => {
      // A broken connection while the commit was pending: say that the outcome is unknown.
      if (error && !(error instanceof pg.DatabaseError) && query.outcome() === 'unknown') {
        return settle(new UnansweredQueryError(`connection lost while PostgreSQL was committing (${error.message})`, 'unknown', error))
      }
      settle(error, rows)
    }
    if (timeoutMs > 0) {
      timer = setTimeout(() => {
        const outcome = query.outcome()
        const sent = query.phase !== 'queued'
        query.abandoned = true
        // Nothing more goes out on this connection: no Sync, no COMMIT, no next statement.
        if (sent) wire.stream.destroy()
        settle(new UnansweredQueryError(`Query read timeout: PostgreSQL did not answer within ${timeoutMs} ms`, outcome))
      }, timeoutMs)
    }
    send(query)
    return result
  }
  client.query = guarded as typeof client.query
}
