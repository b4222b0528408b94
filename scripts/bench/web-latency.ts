// Web UI latency benchmark: from a message posted over the REST API to the moment it is in the
// page of an open browser. The budget is 200 ms at p95 on this machine.
//
// It starts the real server (`node <flags of npm start> src/server.ts`, the built UI from
// dist/web) on a scratch database, bootstraps a workspace, signs the owner in through the API,
// opens the default channel in headless Chromium (playwright-core, the system's /usr/bin/chromium)
// and watches the message list with a MutationObserver. Then an agent posts MESSAGES messages,
// one at a time (each waits for the previous one to show, plus a short pause), and for each the
// time from just before the POST is sent to the moment its text enters the page is recorded on
// the same clock (performance.timeOrigin + performance.now() in both processes: the system clock
// at high resolution). The first WARMUP messages are not counted.
//
// Usage: npx tsx scripts/bench/web-latency.ts
//   BENCH_MESSAGES (200) BENCH_WARMUP (10) BENCH_PAUSE_MS (50, between messages)
//   BENCH_DATABASE_URL (postgresql://postgres@127.0.0.1:5432/postgres: a scratch database is
//   created next to it and dropped afterwards) CHROMIUM_PATH (/usr/bin/chromium)
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { chromium } from 'playwright-core'
import { applyMigrations } from '../../src/db/migrate.ts'
import { adminQuery, databaseUrl, freePort, machine, percentile, startFlags } from './lib.ts'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 200)
const WARMUP = Number(process.env.BENCH_WARMUP ?? 10)
const PAUSE_MS = Number(process.env.BENCH_PAUSE_MS ?? 50)
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const PASSWORD = 'bench-password-long-enough'

const now = () => performance.timeOrigin + performance.now()
const loadavg = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')

async function startServer(env: Record<string, string>): Promise<{ proc: ChildProcess; base: string }> {
  const port = await freePort()
  const proc = spawn(process.execPath, [...startFlags(ROOT), 'src/server.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'inherit', 'inherit'],
  })
  const base = `http://127.0.0.1:${port}`
  for (let i = 0; i < 600; i++) {
    if (
      await fetch(`${base}/health`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return { proc, base }
    if (proc.exitCode !== null) break
    await sleep(100)
  }
  proc.kill('SIGKILL')
  throw new Error('server did not start')
}

/** One API call; a 503 (the server shedding load, e.g. just after start on a busy machine) is tried again. */
async function call<T>(base: string, method: string, url: string, token: string | null, body?: unknown): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    const res = await fetch(`${base}${url}`, {
      method,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    if (res.status === 503 && attempt < 30) {
      retried503 += 1
      await res.arrayBuffer()
      await sleep(500)
      continue
    }
    if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`)
    return (await res.json()) as T
  }
}
let retried503 = 0

const OBSERVER = `
  window.seen = {};
  const note = (node) => {
    if (node.nodeType !== 1) return;
    const texts = node.matches('.message-text') ? [node] : node.querySelectorAll('.message-text');
    for (const text of texts) {
      const match = /^bench-(\\d+)$/.exec(text.textContent || '');
      if (match && !(match[1] in window.seen)) window.seen[match[1]] = performance.timeOrigin + performance.now();
    }
  };
  new MutationObserver((records) => records.forEach((r) => r.addedNodes.forEach(note)))
    .observe(document.querySelector('[role="log"]'), { childList: true, subtree: true });
`

async function main(): Promise<void> {
  if (!existsSync(path.join(ROOT, 'dist', 'web', 'index.html'))) throw new Error('the web UI is not built: npm run web:build')
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM} (apt-get install -y chromium, or set CHROMIUM_PATH)`)
  console.log(`# web latency: API post → shown in an open browser; ${MESSAGES} messages (${WARMUP} warm-up not counted), ${PAUSE_MS} ms apart`)
  console.log(`# ${machine()}; load average before: ${loadavg()}`)
  const name = `ams_bench_web_${Date.now().toString(36)}`
  await adminQuery(`CREATE DATABASE "${name}"`)
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'ams-bench-web-'))
  let server: { proc: ChildProcess; base: string } | null = null
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] })
  try {
    await applyMigrations(databaseUrl(name))
    server = await startServer({ DATABASE_URL: databaseUrl(name), DATA_DIR: dataDir, MIGRATE_ON_START: 'false', JWT_SECRET: 'bench-secret-bench-secret-bench-secret-00' })
    const { base } = server
    const boot = await call<{ primary_agent: { api_key: string; user_id: string }; channel: { channel_id: string } }>(base, 'POST', '/api/v1/bootstrap', null, {
      primary_agent: { email: 'owner@bench.test', password: PASSWORD, agent_profile: { name: 'bench-agent', display_name: 'Bench agent' } },
    })
    const channelId = boot.channel.channel_id
    const session = await call<{ token: string; user_id: string }>(base, 'POST', '/api/v1/auth/login', null, { email: 'owner@bench.test', password: PASSWORD })
    // The owner reads every channel, but live events follow membership: join it.
    await call(base, 'POST', `/api/v1/channels/${channelId}/members`, session.token, { user_id: session.user_id })
    // One agent posts MESSAGES messages in a row: the loop guard (docs/loops.md) would stop it.
    await call(base, 'PATCH', '/api/v1/workspace', session.token, { loop_guard_enabled: false })

    const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage()
    await page.addInitScript((value) => {
      ;(globalThis as unknown as { localStorage: { setItem: (k: string, v: string) => void } }).localStorage.setItem('ams.session', value)
    }, JSON.stringify(session))
    await page.goto(`${base}/c/${channelId}`)
    await page.getByText('No messages yet. Say hello!').waitFor()
    // Record, on the page's clock, when each benchmark message's text enters the list. (Plain
    // JavaScript in a string: tsx would wrap named functions of an evaluated closure in a helper
    // the page does not have.)
    await page.addScriptTag({ content: OBSERVER })
    const sent: number[] = []
    for (let i = 0; i < MESSAGES; i++) {
      sent[i] = now()
      await call(base, 'POST', `/api/v1/channels/${channelId}/messages`, boot.primary_agent.api_key, { text: `bench-${i}` })
      await page.waitForFunction((n) => String(n) in (globalThis as unknown as { seen: Record<string, number> }).seen, i, { polling: 5 })
      await sleep(PAUSE_MS)
    }
    const seen = await page.evaluate(() => (globalThis as unknown as { seen: Record<string, number> }).seen)
    const latencies = sent
      .map((at, i) => seen[String(i)]! - at)
      .slice(WARMUP)
      .sort((a, b) => a - b)
    const ms = (v: number) => Math.round(v * 10) / 10
    const result = {
      messages: latencies.length,
      p50_ms: ms(percentile(latencies, 50)),
      p95_ms: ms(percentile(latencies, 95)),
      p99_ms: ms(percentile(latencies, 99)),
      max_ms: ms(latencies.at(-1)!),
      budget_p95_ms: 200,
      load_average_after: loadavg(),
      retried_503: retried503,
      machine: machine(),
    }
    console.log(`p50 ${result.p50_ms} ms · p95 ${result.p95_ms} ms · p99 ${result.p99_ms} ms · max ${result.max_ms} ms over ${result.messages} messages (budget: p95 ≤ 200 ms)`)
    console.log(JSON.stringify(result))
  } finally {
    await browser.close()
    if (server) {
      const exited = new Promise((resolve) => server!.proc.once('exit', resolve))
      server.proc.kill('SIGTERM')
      await Promise.race([exited, sleep(15_000).then(() => server!.proc.kill('SIGKILL'))])
    }
    await adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch(() => {})
    await rm(dataDir, { recursive: true, force: true })
  }
}

await main()
