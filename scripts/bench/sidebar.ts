// The web UI's request storm, measured: open pages of signed-in people while agents post.
//
// It starts the real server (`node <flags of npm start> src/server.ts`) on a scratch database,
// bootstraps a workspace with CHANNELS channels, PAGES people (each a member of every channel) and
// AGENTS agents, and opens PAGES pages, each on its own channel, that make exactly the requests
// the web UI makes (src/web; kept in step by hand, and checked against a real Chromium page with
// BENCH_BROWSER=1):
//   on load   GET /auth/me, /channels, /dm, /inbox?limit=1 (mentions badge, after the channel
//             list), /channels/{id}, /channels/{id}/messages?limit=50&threads=roots,
//             /channels/{id}/members (the mention autocomplete of the composer), /directory
//             (online dots, names), and the socket /ws?token=…
//   per event a message from someone else in the open conversation moves the read marker
//             (PUT /channels/{id}/read), at most once per 3 s: at once, then to the newest
//             message at the end of the window (src/web/messages/read-marker.ts). Every other
//             event updates the cached lists in place and asks for nothing (sidebar-state.ts);
//             a reconnect or a conversation the lists do not know would ask for both lists once.
// Then AGENTS agents post RATE messages/s in total, to random channels, for SECONDS seconds, while
// a probe asks GET /api/v1/channels (as one of the people) PROBE_RATE times a second.
//
// Prints: requests per posted message per open page (the goal: ≤ 0.02), the server's
// CPU (the server process, PostgreSQL, Redis: /proc), the load generator's own CPU
// (process.cpuUsage), p50/p99 of GET /api/v1/channels during the posting, posting latency, and
// the machine's load average (the machine is shared: read the figures next to it).
//
// Usage: npm run bench:sidebar     (or npx tsx scripts/bench/sidebar.ts)
//   BENCH_PAGES (50) BENCH_CHANNELS (150) BENCH_AGENTS (10) BENCH_RATE (50 messages/s in all)
//   BENCH_SECONDS (60) BENCH_PROBE_RATE (4 requests/s) BENCH_BROWSER (0; 1: one of the pages is
//   a real Chromium page, /usr/bin/chromium, whose API requests are counted the same way)
//   BENCH_DATABASE_URL (postgresql://postgres@127.0.0.1:5432/postgres: a scratch database is
//   created next to it and dropped afterwards) BENCH_LOG_LEVEL (warn)
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import WebSocket from 'ws'
import { applyMigrations } from '../../src/db/migrate.ts'
import { adminQuery, cpuMeter, databaseUrl, freePort, machine, percentile, startFlags } from './lib.ts'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const PAGES = Number(process.env.BENCH_PAGES ?? 50)
const CHANNELS = Number(process.env.BENCH_CHANNELS ?? 150)
const AGENTS = Number(process.env.BENCH_AGENTS ?? 10)
const RATE = Number(process.env.BENCH_RATE ?? 50)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 60)
const PROBE_RATE = Number(process.env.BENCH_PROBE_RATE ?? 4)
const BROWSER = process.env.BENCH_BROWSER === '1'
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const PASSWORD = 'bench-password-long-enough'
/** The web UI moves the read marker at most this often (src/web/messages/read-marker.ts READ_EVERY_MS). */
const READ_EVERY_MS = 3000
/** Its newest page of a conversation (src/web/messages/queries.ts PAGE_SIZE). */
const PAGE_SIZE = 50

const loadavg = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 })

interface Answer {
  status: number
  body: string
  ms: number
}

function request(base: string, method: string, url: string, token: string | null, body?: unknown): Promise<Answer> {
  const started = performance.now()
  const payload = body === undefined ? undefined : JSON.stringify(body)
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${base}${url}`,
      {
        method,
        agent,
        headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}) },
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), ms: performance.now() - started }))
      },
    )
    req.on('error', reject)
    if (payload) req.write(payload)
    req.end()
  })
}

async function call<T>(base: string, method: string, url: string, token: string | null, body?: unknown): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    const res = await request(base, method, url, token, body)
    if (res.status === 503 && attempt < 30) {
      await sleep(500)
      continue
    }
    if (res.status >= 400) throw new Error(`${method} ${url}: ${res.status} ${res.body}`)
    return (res.body ? JSON.parse(res.body) : null) as T
  }
}

async function startServer(env: Record<string, string>): Promise<{ proc: ChildProcess; base: string }> {
  const port = await freePort()
  const proc = spawn(process.execPath, [...startFlags(ROOT), 'src/server.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn', ...env },
    stdio: ['ignore', 'inherit', 'inherit'],
  })
  const base = `http://127.0.0.1:${port}`
  for (let i = 0; i < 600; i++) {
    if ((await request(base, 'GET', '/health', null).catch(() => null))?.status === 200) return { proc, base }
    if (proc.exitCode !== null) break
    await sleep(100)
  }
  proc.kill('SIGKILL')
  throw new Error('server did not start')
}

interface Person {
  id: string
  token: string
}

/** One open page of the web UI, as its requests: load, socket, read marker. */
class Page {
  requests = 0
  loadRequests = 0
  failed = 0
  framesIn = 0
  private socket: WebSocket | null = null
  private sent = 0
  private pending: string | null = null
  private timer: ReturnType<typeof setTimeout> | null = null
  counting = false

  constructor(
    private base: string,
    private person: Person,
    private channelId: string,
  ) {}

  private async get(url: string): Promise<Answer> {
    const res = await request(this.base, 'GET', url, this.person.token)
    if (this.counting) this.requests += 1
    else this.loadRequests += 1
    if (res.status >= 400) this.failed += 1
    return res
  }

  async open(): Promise<void> {
    const c = this.channelId
    // What the page asks for at once (React Query runs these in parallel); the inbox count waits
    // for the channel list (useMentionCount is enabled once the list arrived).
    const [, channels] = await Promise.all([
      this.get('/api/v1/auth/me'),
      this.get('/api/v1/channels'),
      this.get('/api/v1/dm'),
      this.get(`/api/v1/channels/${c}`),
      this.get(`/api/v1/channels/${c}/messages?limit=${PAGE_SIZE}&threads=roots`),
      this.get(`/api/v1/channels/${c}/members`),
      this.get('/api/v1/directory'),
    ])
    if (channels.status === 200) await this.get('/api/v1/inbox?limit=1')
    const ws = new WebSocket(`${this.base.replace('http:', 'ws:')}/ws?token=${encodeURIComponent(this.person.token)}`, { perMessageDeflate: false })
    this.socket = ws
    await new Promise<void>((resolve, reject) => {
      ws.on('message', (data) => {
        const frame = JSON.parse((data as Buffer).toString('utf8')) as { type: string; channel_id?: string; message?: { id: string; author_id: string; thread_id: string | null } }
        this.framesIn += 1
        if (frame.type === 'ready') resolve()
        if (frame.type === 'new_message' && frame.channel_id === this.channelId && frame.message && frame.message.author_id !== this.person.id && !frame.message.thread_id) this.mark(frame.message.id)
      })
      ws.once('error', reject)
    })
  }

  /** read-marker.ts: the newest message counts as read; at most one PUT per READ_EVERY_MS. */
  private mark(newest: string): void {
    this.pending = newest
    const wait = this.sent + READ_EVERY_MS - performance.now()
    if (wait <= 0) this.flush()
    else this.timer ??= setTimeout(() => this.flush(), wait)
  }

  private flush(): void {
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
    const id = this.pending
    if (!id) return
    this.pending = null
    this.sent = performance.now()
    if (this.counting) this.requests += 1
    void request(this.base, 'PUT', `/api/v1/channels/${this.channelId}/read`, this.person.token, { message_id: id }).then(
      (res) => {
        if (res.status >= 400) this.failed += 1
      },
      () => (this.failed += 1),
    )
  }

  close(): void {
    if (this.timer) clearTimeout(this.timer)
    this.socket?.close(1000)
  }
}

async function seed(base: string, url: string): Promise<{ owner: Person; people: Person[]; agentKeys: string[]; channelIds: string[] }> {
  const boot = await call<{ primary_agent: { api_key: string; agent_id: string } }>(base, 'POST', '/api/v1/bootstrap', null, {
    primary_agent: { email: 'owner@bench.test', password: PASSWORD, agent_profile: { name: 'bench-primary', display_name: 'Bench primary' } },
  })
  const ownerSession = await call<{ token: string; user_id: string }>(base, 'POST', '/api/v1/auth/login', null, { email: 'owner@bench.test', password: PASSWORD })
  const owner = { id: ownerSession.user_id, token: ownerSession.token }
  await call(base, 'PATCH', '/api/v1/workspace', owner.token, { loop_guard_enabled: false })
  const channelIds: string[] = []
  for (let i = 0; i < CHANNELS; i++) channelIds.push((await call<{ id: string }>(base, 'POST', '/api/v1/channels', owner.token, { name: `room-${String(i).padStart(3, '0')}` })).id)
  const agentKeys: string[] = [boot.primary_agent.api_key]
  const agentIds: string[] = [boot.primary_agent.agent_id]
  for (let i = 1; i < AGENTS; i++) {
    const created = await call<{ id: string }>(base, 'POST', '/api/v1/agents', owner.token, { name: `poster-${i}` })
    const key = await call<{ key: string }>(base, 'POST', `/api/v1/agents/${created.id}/keys`, owner.token, { name: 'bench' })
    agentIds.push(created.id)
    agentKeys.push(key.key)
  }
  // People through the invite flow (their own passwords and sessions), a few at a time (bcrypt).
  const people: Person[] = []
  for (let i = 0; i < PAGES; i += 5) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(5, PAGES - i) }, async (_, j) => {
        const email = `person-${i + j}@bench.test`
        const invite = await call<{ invite_token: string }>(base, 'POST', '/api/v1/invites', owner.token, { email, display_name: `Person ${i + j}` })
        await call(base, 'POST', '/api/v1/invite/accept', null, { token: invite.invite_token, password: PASSWORD })
        const session = await call<{ token: string; user_id: string }>(base, 'POST', '/api/v1/auth/login', null, { email, password: PASSWORD })
        return { id: session.user_id, token: session.token }
      }),
    )
    people.push(...batch)
  }
  // Everyone (people and agents) in every channel: written in one statement rather than
  // CHANNELS × (PAGES + AGENTS) API calls, before any socket opens.
  const pool = new pg.Pool({ connectionString: url, max: 1 })
  await pool.query(
    `INSERT INTO channel_members (channel_id, member_id, member_type)
     SELECT c, m.id, m.type::actor_type FROM unnest($1::uuid[]) AS c,
            (SELECT unnest($2::uuid[]) AS id, 'HUMAN' AS type UNION ALL SELECT unnest($3::uuid[]), 'AGENT') AS m
     ON CONFLICT DO NOTHING`,
    [channelIds, people.map((p) => p.id), agentIds],
  )
  await pool.end()
  return { owner, people, agentKeys, channelIds }
}

async function openBrowserPage(base: string, person: Person, channelId: string): Promise<{ requests: () => number; startCounting: () => void; loadRequests: string[]; close: () => Promise<void> }> {
  if (!existsSync(CHROMIUM)) throw new Error(`BENCH_BROWSER=1 but no Chromium at ${CHROMIUM}`)
  const { chromium } = await import('playwright-core')
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] })
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage()
  let counting = false
  let count = 0
  const loadRequests: string[] = []
  page.on('request', (r) => {
    const u = new URL(r.url())
    if (!u.pathname.startsWith('/api/')) return
    if (counting) count += 1
    else loadRequests.push(`${r.method()} ${u.pathname.replace(/[0-9a-f-]{36}/g, '{id}')}${u.search.replace(/[0-9a-f-]{36}/g, '{id}')}`)
  })
  const session = {
    token: person.token,
    user_id: person.id,
    email: 'person-0@bench.test',
    display_name: 'Person 0',
    role: 'member',
    is_owner: false,
    expires_at: new Date(Date.now() + 3600_000).toISOString(),
  }
  await page.addInitScript((value) => {
    ;(globalThis as unknown as { localStorage: { setItem: (k: string, v: string) => void } }).localStorage.setItem('ams.session', value)
  }, JSON.stringify(session))
  await page.goto(`${base}/c/${channelId}`)
  await page.getByRole('log').waitFor()
  await sleep(2000)
  return { requests: () => count, startCounting: () => (counting = true), loadRequests, close: () => browser.close() }
}

async function main(): Promise<void> {
  if (BROWSER && !existsSync(path.join(ROOT, 'dist', 'web', 'index.html'))) throw new Error('the web UI is not built: npm run web:build')
  console.log(`# sidebar: ${PAGES} open pages (${BROWSER ? '1 in Chromium, ' : ''}each on its own channel), ${CHANNELS} channels, ${AGENTS} agents posting ${RATE} messages/s for ${SECONDS} s`)
  console.log(`# ${machine()}; nproc ${os.cpus().length}; load average before: ${loadavg()}`)
  const name = `ams_bench_sidebar_${Date.now().toString(36)}`
  await adminQuery(`CREATE DATABASE "${name}"`)
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'ams-bench-sidebar-'))
  let server: { proc: ChildProcess; base: string } | null = null
  const pages: Page[] = []
  let browserPage: Awaited<ReturnType<typeof openBrowserPage>> | null = null
  try {
    await applyMigrations(databaseUrl(name))
    server = await startServer({ DATABASE_URL: databaseUrl(name), DATA_DIR: dataDir, MIGRATE_ON_START: 'false', JWT_SECRET: 'bench-secret-bench-secret-bench-secret-00' })
    const { base } = server
    const seeded = await seed(base, databaseUrl(name))
    console.log(`# seeded: ${seeded.channelIds.length} channels, ${seeded.people.length} people, ${seeded.agentKeys.length} agents (load ${loadavg()})`)

    // Open the pages, a few at a time, as people arriving.
    const synthetic = BROWSER ? seeded.people.slice(1) : seeded.people
    for (let i = 0; i < synthetic.length; i += 10) {
      const batch = synthetic.slice(i, i + 10).map((p, j) => new Page(base, p, seeded.channelIds[(i + j + (BROWSER ? 1 : 0)) % seeded.channelIds.length]!))
      await Promise.all(batch.map((p) => p.open()))
      pages.push(...batch)
    }
    if (BROWSER) browserPage = await openBrowserPage(base, seeded.people[0]!, seeded.channelIds[0]!)
    const loadPerPage = pages.length ? pages[0]!.loadRequests : 0
    console.log(`# pages open: ${pages.length + (BROWSER ? 1 : 0)}; each asked ${loadPerPage} API requests on load (plus its socket)`)
    if (browserPage) console.log(`# the Chromium page on load: ${browserPage.loadRequests.length} API requests: ${browserPage.loadRequests.join(', ')}`)
    await sleep(1000)

    // Posting, the probe and the meters.
    for (const p of pages) p.counting = true
    browserPage?.startCounting()
    const serverCpu = cpuMeter([server.proc.pid!])
    const generatorCpu = process.cpuUsage()
    const started = performance.now()
    const postLatencies: number[] = []
    const probeLatencies: number[] = []
    let posted = 0
    let postFailed = 0
    let probeFailed = 0
    const deadline = started + SECONDS * 1000
    const inFlight = new Set<Promise<unknown>>()
    const poster = (async () => {
      for (let i = 0; performance.now() < deadline; i++) {
        const due = started + (i * 1000) / RATE
        const wait = due - performance.now()
        if (wait > 0) await sleep(wait)
        const key = seeded.agentKeys[i % seeded.agentKeys.length]!
        const channel = seeded.channelIds[Math.floor(Math.random() * seeded.channelIds.length)]!
        const p = request(base, 'POST', `/api/v1/channels/${channel}/messages`, key, { text: `bench message ${i}: deploy the build and tell me how it went` }).then(
          (res) => {
            if (res.status === 201) {
              posted += 1
              postLatencies.push(res.ms)
            } else {
              postFailed += 1
              if (postFailed <= 3) console.log(`# a post failed: ${res.status} ${res.body.slice(0, 200)}`)
            }
          },
          () => (postFailed += 1),
        )
        inFlight.add(p)
        void p.finally(() => inFlight.delete(p))
      }
    })()
    const probe = (async () => {
      const prober = seeded.people[seeded.people.length - 1]!
      for (let i = 0; performance.now() < deadline; i++) {
        const wait = started + (i * 1000) / PROBE_RATE - performance.now()
        if (wait > 0) await sleep(wait)
        const res = await request(base, 'GET', '/api/v1/channels', prober.token).catch(() => null)
        if (res?.status === 200) probeLatencies.push(res.ms)
        else probeFailed += 1
      }
    })()
    await Promise.all([poster, probe])
    await Promise.all(inFlight)
    // Let the last events and read markers arrive.
    await sleep(READ_EVERY_MS + 500)
    const elapsed = (performance.now() - started) / 1000
    const cpu = serverCpu()
    const generator = process.cpuUsage(generatorCpu)
    const generatorPct = Math.round(((generator.user + generator.system) / 1e6 / elapsed) * 100)
    const pageRequests = pages.reduce((n, p) => n + p.requests, 0) + (browserPage?.requests() ?? 0)
    const openPages = pages.length + (browserPage ? 1 : 0)
    postLatencies.sort((a, b) => a - b)
    probeLatencies.sort((a, b) => a - b)
    const ms = (v: number) => Math.round(v * 10) / 10
    const result = {
      pages: openPages,
      channels: CHANNELS,
      agents: AGENTS,
      rate_per_s: RATE,
      seconds: SECONDS,
      posted,
      post_failed: postFailed,
      posted_per_s: Math.round((posted / SECONDS) * 10) / 10,
      page_requests: pageRequests,
      page_request_failures: pages.reduce((n, p) => n + p.failed, 0),
      requests_per_message_per_page: Math.round((pageRequests / Math.max(1, posted) / openPages) * 10000) / 10000,
      goal_requests_per_message_per_page: 0.02,
      browser_page_requests: browserPage?.requests() ?? null,
      frames_per_page: Math.round(pages.reduce((n, p) => n + p.framesIn, 0) / Math.max(1, pages.length)),
      sidebar_p50_ms: ms(percentile(probeLatencies, 50)),
      sidebar_p99_ms: ms(percentile(probeLatencies, 99)),
      sidebar_samples: probeLatencies.length,
      sidebar_failed: probeFailed,
      post_p50_ms: ms(percentile(postLatencies, 50)),
      post_p99_ms: ms(percentile(postLatencies, 99)),
      server_cpu_pct: cpu.server,
      postgres_cpu_pct: cpu.postgres,
      redis_cpu_pct: cpu.redis,
      load_generator_cpu_pct: generatorPct,
      load_average_after: loadavg(),
      machine: machine(),
      nproc: os.cpus().length,
    }
    console.log(
      `requests per posted message per open page: ${result.requests_per_message_per_page} (goal ≤ 0.02; ${pageRequests} requests from ${openPages} pages for ${posted} messages)\n` +
        `GET /api/v1/channels during the posting: p50 ${result.sidebar_p50_ms} ms, p99 ${result.sidebar_p99_ms} ms (${probeLatencies.length} samples)\n` +
        `server CPU ${cpu.server} % of a core, PostgreSQL ${cpu.postgres} %, Redis ${cpu.redis} %; load generator ${generatorPct} %; posts p50 ${result.post_p50_ms} ms, p99 ${result.post_p99_ms} ms; load ${result.load_average_after}`,
    )
    console.log(JSON.stringify(result))
  } finally {
    for (const p of pages) p.close()
    await browserPage?.close().catch(() => {})
    if (server) {
      const exited = new Promise((resolve) => server!.proc.once('exit', resolve))
      server.proc.kill('SIGTERM')
      await Promise.race([exited, sleep(15_000).then(() => server!.proc.kill('SIGKILL'))])
    }
    agent.destroy()
    await adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch(() => {})
    await rm(dataDir, { recursive: true, force: true })
  }
}

await main()
