// The scene of the graceful-stop tests (graceful-stop*.test.ts): closed-loop posters on kept-alive
// connections (each posts, waits for the answer, posts again on the same connection), recording
// how every post ended; an agent webhook and an integration whose receivers answer slowly, so that
// claimed deliveries queue up; the checks made after a SIGTERM.
import http from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { build, testConfig } from '../helper.ts'
import { serverEnv, type ServerProcess } from '../processes.ts'
import { createWebhook, eventually, receiver, type Receiver } from '../webhooks/helpers.ts'
import { bearer, createChannelId, disableLoopGuard, expectStatus, seedWorkspace } from '../support/index.ts'

export interface PostOutcome {
  text: string
  status?: number
  code?: string
  /** The `Connection` header of the answer. */
  connection?: string
  /** The socket error of a post that got no answer (ECONNREFUSED, ECONNRESET, …). */
  error?: string
  /** Whether the post went out on a connection an earlier post had used (kept alive). */
  reused: boolean
}

/** One post on `agent`'s connection: its outcome, never a rejection. */
function postOnce(agent: http.Agent, base: string, path: string, key: string, text: string): Promise<PostOutcome> {
  return new Promise((resolve) => {
    const body = JSON.stringify({ text })
    let settled = false
    const done = (outcome: Omit<PostOutcome, 'text' | 'reused'>): void => {
      if (settled) return
      settled = true
      resolve({ text, reused: req.reusedSocket, ...outcome })
    }
    const req = http.request(`${base}${path}`, { method: 'POST', agent, headers: { ...bearer(key), 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => {
        const status = res.statusCode ?? 0
        let code: string | undefined
        if (status >= 400) code = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { code?: string }).code
        done({ status, code, connection: res.headers.connection })
      })
      res.on('error', (error: NodeJS.ErrnoException) => done({ error: error.code ?? error.message }))
    })
    req.on('error', (error: NodeJS.ErrnoException) => done({ error: error.code ?? error.message }))
    req.end(body)
  })
}

export interface Posters {
  outcomes: PostOutcome[]
  /** Resolves once `n` posts were answered 201. */
  created(n: number): Promise<void>
  /** Stops posting (each poster finishes the post it is making) and resolves when all have. */
  stop(): Promise<void>
}

/**
 * `count` closed-loop posters, each on its own kept-alive connection, posting to `channelId`
 * through `base` until the server refuses connections or stop() is called. Texts are unique
 * (`<label> <poster>.<n>`), so a test can look each post up in the database.
 */
export function startPosters(base: string, channelId: string, key: string, count: number, label: string): Posters {
  const outcomes: PostOutcome[] = []
  let stopping = false
  const waiters: { n: number; resolve: () => void }[] = []
  const notify = (): void => {
    const created = outcomes.filter((o) => o.status === 201).length
    for (const w of [...waiters]) {
      if (created >= w.n) {
        waiters.splice(waiters.indexOf(w), 1)
        w.resolve()
      }
    }
  }
  const loops = Array.from({ length: count }, async (_, poster) => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
    for (let n = 0; !stopping; n++) {
      const outcome = await postOnce(agent, base, `/api/v1/channels/${channelId}/messages`, key, `${label} ${poster}.${n}`)
      outcomes.push(outcome)
      notify()
      if (outcome.error === 'ECONNREFUSED') break // the server no longer listens: done
    }
    agent.destroy()
  })
  return {
    outcomes,
    created: (n) =>
      new Promise<void>((resolve) => {
        waiters.push({ n, resolve })
        notify()
      }),
    stop: async () => {
      stopping = true
      await Promise.all(loops)
    },
  }
}

export const POSTERS = 16
/**
 * Deliveries must arrive before a lease left behind could expire: within half the lease after the
 * restart, which begins seconds after the claims, a delivery still under its lease cannot arrive.
 * (It was 5 s; one full run on a slow, fully loaded machine needed longer for a freshly started
 * server to send 256 deliveries, and the window only has to end before the lease does.)
 */
const LEASE_MS = 60_000
export const DELIVERED_WITHIN_MS = LEASE_MS / 2

export interface Scene {
  app: FastifyInstance
  env: (port: number) => Record<string, string>
  channelId: string
  posterKey: string
  webhookRx: Receiver
  integrationRx: Receiver
  /** Receivers answer slowly until this is set, so claimed deliveries queue up. */
  fast: { value: boolean }
}

export async function scene(t: Test, redis: boolean): Promise<Scene> {
  const env = { WEBHOOK_ALLOW_PRIVATE: 'true' }
  const config = await testConfig(t, { redis, env })
  const { app, api } = await build(t, { databaseUrl: config.databaseUrl, redisPrefix: config.redisPrefix, redis, background: false, env })
  const ws = await seedWorkspace(app)
  // The posters are one agent posting without a human in between: not a loop here.
  await disableLoopGuard(app)
  const poster = ws.primary
  const subscriber = ws.agents[0]!
  const channelId = await createChannelId(api, poster.key, 'stop-under-load', [subscriber.id])

  const fast = { value: false }
  const slowly = async (): Promise<number> => {
    if (!fast.value) await sleep(40)
    return 200
  }
  const webhookRx = await receiver(t, slowly)
  const integrationRx = await receiver(t, slowly)
  await createWebhook(api, subscriber.key, subscriber.id, webhookRx.url())
  const integration = await api({
    method: 'POST',
    url: '/api/v1/integrations',
    headers: bearer(ws.owner.token),
    payload: { name: 'Stop test', platform: 'custom', webhook_url: integrationRx.url('/integration'), agent_ids: [subscriber.id], events: ['message.created'] },
  })
  expectStatus(integration, 201, 'create integration')
  return {
    app,
    env: (port) =>
      serverEnv(config, port, {
        ...env,
        WEBHOOK_CLAIM_TIMEOUT_MS: String(LEASE_MS),
        WEBHOOK_POLL_INTERVAL_MS: '200',
      }),
    channelId,
    posterKey: poster.key,
    webhookRx,
    integrationRx,
    fast,
  }
}

/** Ids of the messages stored in the channel. */
export async function storedIds(app: FastifyInstance, channelId: string): Promise<Map<string, string>> {
  const rows = await app.db.pool.query<{ id: string; text: string }>('SELECT id::text, text FROM messages WHERE channel_id = $1', [channelId])
  return new Map(rows.rows.map((r) => [r.text, r.id]))
}

/**
 * Deliveries pending under a claim: due more than a second from now (a lease is 60 s here; a
 * delivery deferred for a busy endpoint is due again within 250 ms, and no attempt fails here).
 */
export async function leased(app: FastifyInstance): Promise<number> {
  const { rows } = await app.db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM deliveries WHERE status = 'pending' AND next_attempt_at > now() + interval '1 second'")
  return rows[0]!.n
}

const messageIdOf = (body: string): string | undefined => {
  const parsed = JSON.parse(body) as { payload: { message?: { id: string }; message_id?: string } }
  return parsed.payload.message?.id ?? parsed.payload.message_id
}

/** Waits until both receivers have had every id, up to `ms`; returns what each still misses. */
export async function deliveredWithin(s: Scene, ids: string[], ms: number): Promise<{ webhook: string[]; integration: string[] }> {
  const missing = (rx: Receiver): string[] => {
    const got = new Set(rx.requests.map((r) => messageIdOf(r.body)))
    return ids.filter((id) => !got.has(id))
  }
  const deadline = Date.now() + ms
  for (;;) {
    const left = { webhook: missing(s.webhookRx), integration: missing(s.integrationRx) }
    if ((!left.webhook.length && !left.integration.length) || Date.now() > deadline) return left
    await sleep(25)
  }
}

/**
 * What the database says of the deliveries of `missing` messages (for a failure's message): each
 * delivery's status, attempts, last outcome and when it is due, or that it was never planned.
 */
export async function deliveryStates(app: FastifyInstance, missing: { webhook: string[]; integration: string[] }): Promise<Record<string, unknown>[]> {
  const ids = [...new Set([...missing.webhook, ...missing.integration])]
  if (!ids.length) return []
  const { rows } = await app.db.pool.query<Record<string, unknown>>(
    `SELECT m.id AS message_id, d.webhook_id IS NOT NULL AS webhook, d.status, d.attempts, d.last_status_code, d.last_error,
            round(extract(epoch FROM d.next_attempt_at - now()))::int AS due_in_s, o.planned_at IS NOT NULL AS planned
       FROM unnest($1::uuid[]) AS m(id)
       LEFT JOIN outbox_events o ON o.type = 'message.created' AND o.payload->'message'->>'id' = m.id::text
       LEFT JOIN deliveries d ON d.body LIKE '%' || m.id::text || '%'
      ORDER BY m.id`,
    [ids],
  )
  return rows
}

/** Every post was answered (201, or 503 with Connection: close) or refused; none was cut off. */
export function checkOutcomes(t: Test, outcomes: PostOutcome[]): void {
  const cut = outcomes.filter((o) => o.error && o.error !== 'ECONNREFUSED')
  t.same(cut, [], 'no post lost its connection without an answer (no reset, no hang-up)')
  const answered = outcomes.filter((o) => !o.error)
  const odd = answered.filter((o) => o.status !== 201 && !(o.status === 503 && o.code === 'SERVICE_UNAVAILABLE' && o.connection === 'close'))
  t.same(odd, [], 'every answer is 201, or 503 SERVICE_UNAVAILABLE with Connection: close')
  // Each poster's last answer closed its kept-alive connection; its next post was refused.
  const lastAnswers = Array.from({ length: POSTERS }, (_, poster) => outcomes.filter((o) => o.text.startsWith(`stop ${poster}.`) && !o.error).at(-1))
  t.same(
    lastAnswers.filter((o) => o?.connection !== 'close'),
    [],
    'the last answer on every kept-alive connection said Connection: close',
  )
  t.same(
    Array.from({ length: POSTERS }, (_, poster) => outcomes.filter((o) => o.text.startsWith(`stop ${poster}.`)).at(-1)?.error),
    Array.from({ length: POSTERS }, () => 'ECONNREFUSED'),
    'then each poster found the port closed',
  )
}

export async function stopUnderLoad(t: Test, s: Scene, server: ServerProcess): Promise<PostOutcome[]> {
  const posters = startPosters(server.http, s.channelId, s.posterKey, POSTERS, 'stop')
  await posters.created(100)
  // Deliveries under way (both receivers busy) when the signal comes, the posters still posting.
  await eventually(async () => s.webhookRx.requests.length > 0 && s.integrationRx.requests.length > 0, 'deliveries to both receivers')
  server.proc.kill('SIGTERM')
  const code = await server.exited
  await posters.stop()
  t.equal(code, 0, `a clean exit${code === 0 ? '' : `: ${server.output().slice(-2000)}`}`)
  return posters.outcomes
}
