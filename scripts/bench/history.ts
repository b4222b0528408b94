// History, search and unread counts at a million messages, through the API of the real server.
//
// 1. Seeds its own scratch database (never another one): 200 channels, a few hundred author
//    agents, 1,000,000 messages over a year (one every ~31 s), 8-27 words each drawn from a
//    1,500-word vocabulary with a Zipf distribution (the commonest words are English stop words,
//    as in real chat), a rare word planted in 10 messages, 1 % of messages with an attachment,
//    and read markers. Rows go in with multi-row INSERTs over unnest() (the generated `search`
//    column computes each tsvector); the full-text GIN index is dropped first and built again at
//    the end in one pass, which is far quicker than a million index insertions. Then VACUUM ANALYZE.
// 2. Starts the real server (`node <flags of npm start> --import tsx src/server.ts`) on it.
// 3. Runs each request kind with 1 client, then with 16 concurrent clients (keep-alive HTTP), and
//    prints p50/p99, rate, failures and the server's RSS before and after, with the load average
//    of the machine at each row (the machine is shared: read figures next to their load).
//
// Two callers: `wide`, a member of every channel (search scope = 1,000,000 messages), and
// `narrow`, a member of 5 channels (25,000 messages), whose scope is small against the table.
//
// Usage: npm run bench:history    (or npx tsx scripts/bench/history.ts)
//   BENCH_MESSAGES (1000000) BENCH_CHANNELS (200) BENCH_AUTHORS (300)
//   BENCH_SECONDS (8: per row at most) BENCH_REQUESTS_1 (300) BENCH_REQUESTS_16 (3000): per row at most
//   BENCH_ONLY (comma-separated row names or prefixes, e.g. "search,unread") BENCH_CONCURRENCY ("1,16")
//   BENCH_KEEP_DB=1 keeps the database (named ams_bench_history_<messages>) and BENCH_REUSE_DB=1
//   reuses it when it was seeded with the same sizes (applying the migrations added since): re-runs
//   then skip the ~5 min seeding. Each row also gives the CPU milliseconds per request of the server
//   process and of the bench database's PostgreSQL backends, the figures a busy machine moves least.
//   BENCH_SERVER_ROOT (another checkout, with node_modules, whose server to run: A/B comparisons
//   on the same data) BENCH_SERVER_ENV ("NAME=value NAME=value") BENCH_LOG_LEVEL (warn)
//   BENCH_EXPLAIN=1 prints EXPLAIN (ANALYZE, BUFFERS) of the search statement for each query of the
//   wide caller, and of the unread counts, instead of running the server.
//   BENCH_DATABASE_URL (postgresql://postgres@127.0.0.1:5432/postgres: the scratch database is
//   created next to it and dropped at the end unless kept)
import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { applyMigrations } from '../../src/db/migrate.ts'
import { API_KEY_PREFIX, maskSecret, newSecret, sha256Hex } from '../../src/lib/tokens.ts'
import { searchStatement } from '../../src/modules/messages/search-repo.ts'
import { adminQuery, cpuSecondsOf, databaseUrl, freePort, machine, percentile, SERVER_ENV, startFlags } from './lib.ts'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const SERVER_ROOT = path.resolve(process.env.BENCH_SERVER_ROOT ?? ROOT)
const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 1_000_000)
const CHANNELS = Number(process.env.BENCH_CHANNELS ?? 200)
const AUTHORS = Number(process.env.BENCH_AUTHORS ?? 300)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8)
const MAX_REQUESTS: Record<number, number> = { 1: Number(process.env.BENCH_REQUESTS_1 ?? 300), 16: Number(process.env.BENCH_REQUESTS_16 ?? 3000) }
const CONCURRENCY = (process.env.BENCH_CONCURRENCY ?? '1,16').split(',').map(Number)
const ONLY = (process.env.BENCH_ONLY ?? '')
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean)
const KEEP = process.env.BENCH_KEEP_DB === '1'
const REUSE = process.env.BENCH_REUSE_DB === '1'
const DB_NAME = KEEP || REUSE ? `ams_bench_history_${MESSAGES}` : `ams_bench_history_${process.pid}`
const EXPLAIN = process.env.BENCH_EXPLAIN === '1'
const SEED_VERSION = 'ams-bench-history v1'
const YEAR_MS = 365 * 86_400_000
const MEMBERS_PER_CHANNEL = 15
const NARROW_CHANNELS = 5
const RARE_WORD = 'zephyrine'
const RARE_COUNT = 10
/** How deep the deep history page starts: 2,500 messages, or half a channel at a smaller scale. */
const DEEP = Math.min(2500, Math.floor(MESSAGES / CHANNELS / 2))

// A deterministic PRNG (mulberry32): the same seed gives the same messages on every machine.
function prng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

// The vocabulary, commonest first. English stop words take the top ranks as they do in chat (the
// full-text parser drops them), then workplace words, then made-up words from syllables so that
// there are 1,500 distinct stems.
const STOP_WORDS = 'the to and a of is in it for on we this that i be with you can at are not so if but as was will have do from my me just our what an or they by there all up about get'.split(' ')
const WORK_WORDS = (
  'deploy build test release merge branch review issue ticket bug fix patch service server client request response error timeout retry queue worker job task ' +
  'agent model prompt token context tool call result output input data schema table index query cache memory disk network latency throughput metric alert ' +
  'incident outage rollback config setting flag feature customer user account team meeting sync plan sprint roadmap estimate deadline priority blocker ' +
  'question answer update status report summary draft document spec design proposal decision note comment thread channel message file upload link ' +
  'dashboard graph chart log trace span event stream topic partition consumer producer webhook endpoint payload header version upgrade migration ' +
  'backup restore snapshot region cluster node pod container image registry pipeline stage runner artifact package dependency library module function ' +
  'method class object array string number boolean null value key secret credential permission role owner admin guest invite login session cookie ' +
  'browser mobile desktop screen button form field label color layout style theme font icon page route handler controller view template render ' +
  'monday tuesday wednesday thursday friday morning afternoon evening tonight tomorrow yesterday week month quarter year today later soon asap ' +
  'thanks please sure okay great nice good bad slow fast broken fixed done pending ready blocked waiting started finished shipped merged approved ' +
  'check look see think know need want try run start stop restart send receive read write open close create delete move copy rename share ' +
  'budget invoice contract vendor partner launch campaign analytics revenue growth churn signup onboarding support feedback survey roadmap'
).split(' ')
const SYLLABLES = 'ba be bi bo bu ka ke ki ko ku la le li lo lu ma me mi mo mu na ne ni no nu ra re ri ro ru sa se si so su ta te ti to tu va ve vi vo vu za ze zi zo zu'.split(' ')

function vocabulary(size: number): string[] {
  const words = [...new Set([...STOP_WORDS, ...WORK_WORDS])]
  const random = prng(7)
  const seen = new Set(words)
  while (words.length < size) {
    const n = 2 + Math.floor(random() * 3)
    let w = ''
    for (let i = 0; i < n; i++) w += SYLLABLES[Math.floor(random() * SYLLABLES.length)]
    w += 'nrstlk'[Math.floor(random() * 6)]!
    if (!seen.has(w)) {
      seen.add(w)
      words.push(w)
    }
  }
  return words.slice(0, size)
}
const VOCAB = vocabulary(1500)
// Rank r (1-based) is drawn with probability ~ 1/r: floor(exp(u · ln(V+1))) for u uniform in [0,1).
const LOG_V = Math.log(VOCAB.length + 1)
const zipfWord = (random: () => number): string => VOCAB[Math.min(VOCAB.length, Math.floor(Math.exp(random() * LOG_V))) - 1]!
// Expected share of messages containing the word of rank r: 1 - (1 - p_r)^17.5 words a message.
const shareOfRank = (r: number): number => 1 - (1 - Math.log((r + 1) / r) / LOG_V) ** 17.5
const rankNear = (share: number): number => {
  let r = STOP_WORDS.length + 1
  while (shareOfRank(r) > share) r++
  return r
}

/** A UUIDv7 for a given millisecond, with its 74 random bits from the seeded PRNG. */
function uuidv7At(ms: number, random: () => number): string {
  const hex = ms.toString(16).padStart(12, '0')
  const r = (n: number): string => Array.from({ length: n }, () => Math.floor(random() * 16).toString(16)).join('')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-7${r(3)}-${'89ab'[Math.floor(random() * 4)]}${r(3)}-${r(12)}`
}

interface Seeded {
  channels: string[]
  /** Per channel, the ids of the newest message and of the message 2,500 back. */
  deep: Map<string, { newest: string; deep: string }>
  wide: { id: string; key: string }
  narrow: { id: string; key: string; channels: string[] }
  counts: Record<string, number>
}

async function seed(url: string): Promise<void> {
  const pool = new pg.Pool({ connectionString: url, max: 2 })
  const random = prng(42)
  const now = Date.now()
  const start = now - YEAR_MS
  const step = YEAR_MS / MESSAGES
  const channels = Array.from({ length: CHANNELS }, (_, i) => uuidv7At(start - 86_400_000 + i, random))
  const authors = Array.from({ length: AUTHORS }, (_, i) => ({ id: uuidv7At(start - 86_400_000 + i, random), name: `agent-${String(i).padStart(3, '0')}` }))
  const ownerId = uuidv7At(start - 2 * 86_400_000, random)
  await pool.query(`INSERT INTO instance (id) VALUES ($1)`, [uuidv7At(start - 2 * 86_400_000, random)])
  await pool.query(`INSERT INTO users (id, email, display_name, role, is_owner) VALUES ($1, 'owner@bench.local', 'Owner', 'admin', true)`, [ownerId])
  await pool.query(`INSERT INTO agents (id, name, display_name, owner_id) SELECT id, name, name, $3 FROM unnest($1::uuid[], $2::text[]) AS t(id, name)`, [
    authors.map((a) => a.id),
    authors.map((a) => a.name),
    ownerId,
  ])
  await pool.query(`INSERT INTO agents (id, name, display_name, owner_id) VALUES ($1, 'wide-reader', 'wide-reader', $3), ($2, 'narrow-reader', 'narrow-reader', $3)`, [
    uuidv7At(start, random),
    uuidv7At(start, random),
    ownerId,
  ])
  await pool.query(`INSERT INTO channels (id, name, description, created_by_id) SELECT id, 'channel-' || lpad(n::text, 3, '0'), 'bench', $2 FROM unnest($1::uuid[]) WITH ORDINALITY AS t(id, n)`, [
    channels,
    ownerId,
  ])
  // Each channel has MEMBERS_PER_CHANNEL authors; its messages are written by them.
  const membersOf = channels.map((_, c) => Array.from({ length: MEMBERS_PER_CHANNEL }, (_, k) => authors[(c * 7 + k * 37) % AUTHORS]!))
  const memberRows = channels.flatMap((id, c) => membersOf[c]!.map((a) => [id, a.id]))
  await pool.query(`INSERT INTO channel_members (channel_id, member_id, member_type) SELECT DISTINCT c, m, 'AGENT'::actor_type FROM unnest($1::uuid[], $2::uuid[]) AS t(c, m)`, [
    memberRows.map((r) => r[0]),
    memberRows.map((r) => r[1]),
  ])
  await pool.query(
    `INSERT INTO channel_members (channel_id, member_id, member_type)
     SELECT c.id, a.id, 'AGENT' FROM channels c CROSS JOIN agents a
      WHERE a.name = 'wide-reader' OR (a.name = 'narrow-reader' AND c.name <= 'channel-' || lpad($1::text, 3, '0'))`,
    [NARROW_CHANNELS],
  )

  // The GIN index goes and comes back built in one pass (its definition as the migrations left it).
  const { rows: ginDefs } = await pool.query<{ indexname: string; indexdef: string }>(`SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'messages' AND indexdef ILIKE '%USING gin%'`)
  for (const d of ginDefs) await pool.query(`DROP INDEX "${d.indexname}"`)

  const rareAt = new Set(Array.from({ length: RARE_COUNT }, (_, k) => Math.floor(((k + 0.5) * MESSAGES) / RARE_COUNT)))
  const BATCH = 5000
  let inserted = 0
  const t0 = performance.now()
  const insertBatch = async (from: number): Promise<void> => {
    const cols: unknown[][] = [[], [], [], [], [], [], []]
    const att: unknown[][] = [[], [], []]
    for (let i = from; i < Math.min(MESSAGES, from + BATCH); i++) {
      const ms = Math.floor(start + i * step + random() * step * 0.9)
      const c = Math.floor(random() * CHANNELS)
      const author = membersOf[c]![Math.floor(random() * MEMBERS_PER_CHANNEL)]!
      const words = Array.from({ length: 8 + (i % 20) }, () => zipfWord(random))
      if (rareAt.has(i)) words[Math.floor(random() * words.length)] = RARE_WORD
      const id = uuidv7At(ms, random)
      ;[id, channels[c], author.id, 'AGENT', author.name, words.join(' '), new Date(ms)].forEach((v, k) => cols[k]!.push(v))
      if (i % 100 === 7) [uuidv7At(ms, random), id, new Date(ms)].forEach((v, k) => att[k]!.push(v))
    }
    await pool.query(
      `INSERT INTO messages (id, channel_id, author_id, author_type, author_name, text, created_at)
       SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::actor_type[], $5::text[], $6::text[], $7::timestamptz[])`,
      cols,
    )
    await pool.query(
      `INSERT INTO attachments (id, message_id, file_name, content_type, size, storage_name, created_at)
       SELECT a, m, 'report.pdf', 'application/pdf', 48213, a::text, t FROM unnest($1::uuid[], $2::uuid[], $3::timestamptz[]) AS u(a, m, t)`,
      att,
    )
    inserted += (cols[0] as unknown[]).length
    if (inserted % 100_000 === 0) console.error(`#   ${inserted} messages (${Math.round((performance.now() - t0) / 1000)} s)`)
  }
  // Two statements in flight: text is made here while PostgreSQL computes the tsvectors.
  let inFlight: Promise<void> = Promise.resolve()
  for (let from = 0; from < MESSAGES; from += BATCH) {
    const next = insertBatch(from)
    await inFlight
    inFlight = next
  }
  await inFlight
  console.error(`# building the full-text index`)
  await pool.query(`SET maintenance_work_mem = '256MB'`)
  for (const d of ginDefs) await pool.query(d.indexdef)
  // Read markers: the wide reader has read each channel up to 0-100 messages before its newest.
  await pool.query(
    `UPDATE channel_members cm SET last_read_message_id = (
       SELECT id FROM messages m WHERE m.channel_id = cm.channel_id ORDER BY id DESC OFFSET (abs(hashtext(cm.channel_id::text)) % 101) LIMIT 1)
      WHERE cm.member_id = (SELECT id FROM agents WHERE name = 'wide-reader')`,
  )
  console.error(`# VACUUM ANALYZE`)
  await pool.query('VACUUM (ANALYZE) messages, attachments, channel_members, channels, agents')
  await pool.end()
  await adminQuery(`COMMENT ON DATABASE "${DB_NAME}" IS '${SEED_VERSION} ${MESSAGES} ${CHANNELS} ${AUTHORS}'`)
}

async function describe(url: string): Promise<Seeded> {
  const pool = new pg.Pool({ connectionString: url, max: 1 })
  const key = async (agent: string): Promise<{ id: string; key: string }> => {
    const secret = newSecret(API_KEY_PREFIX)
    const { rows } = await pool.query<{ id: string }>(
      `INSERT INTO api_keys (id, agent_id, name, key_hash, masked_key) SELECT gen_random_uuid(), id, 'bench', $2, $3 FROM agents WHERE name = $1 RETURNING agent_id AS id`,
      [agent, sha256Hex(secret), maskSecret(secret, API_KEY_PREFIX)],
    )
    return { id: rows[0]!.id, key: secret }
  }
  const wide = await key('wide-reader')
  const narrow = await key('narrow-reader')
  const { rows: channels } = await pool.query<{ id: string }>(`SELECT id FROM channels ORDER BY name`)
  const { rows: narrowChannels } = await pool.query<{ channel_id: string }>(`SELECT channel_id FROM channel_members WHERE member_id = $1`, [narrow.id])
  const { rows: deepRows } = await pool.query<{ channel_id: string; newest: string; deep: string }>(
    `SELECT c.id AS channel_id,
            (SELECT id FROM messages WHERE channel_id = c.id ORDER BY id DESC LIMIT 1) AS newest,
            (SELECT id FROM messages WHERE channel_id = c.id ORDER BY id DESC OFFSET ${DEEP} LIMIT 1) AS deep
       FROM channels c`,
  )
  const counts: Record<string, number> = {}
  for (const [name, q] of Object.entries(QUERIES)) {
    const { rows } = await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM messages WHERE search @@ websearch_to_tsquery('english', $1)`, [q])
    counts[name] = rows[0]!.n
  }
  await pool.end()
  return {
    channels: channels.map((c) => c.id),
    deep: new Map(deepRows.filter((r) => r.deep).map((r) => [r.channel_id, { newest: r.newest, deep: r.deep }])),
    wide,
    narrow: { ...narrow, channels: narrowChannels.map((c) => c.channel_id) },
    counts,
  }
}

// The search terms: by rank, so that their share of messages is known before seeding.
const COMMON = VOCAB[rankNear(0.01) - 1]!
const TOP = VOCAB[STOP_WORDS.length]!
const SECOND = VOCAB[STOP_WORDS.length + 1]!
const MID = VOCAB[rankNear(0.002) - 1]!
const QUERIES = {
  top: TOP,
  common: COMMON,
  rare: RARE_WORD,
  phrase: `"${TOP} ${SECOND}"`,
  twoWords: `${TOP} ${COMMON}`,
  orWords: `${COMMON} or ${MID}`,
}

interface Row {
  name: string
  path: (random: () => number) => string
  key: 'wide' | 'narrow'
}

function rows(s: Seeded): Row[] {
  const pick = <T>(xs: T[], random: () => number): T => xs[Math.floor(random() * xs.length)]!
  const deepChannels = [...s.deep.keys()]
  const search = (q: string, channels?: string[]) => (random: () => number) => `/api/v1/messages/search?q=${encodeURIComponent(q)}${channels ? `&channel_id=${pick(channels, random)}` : ''}`
  return [
    { name: 'history: newest page of 50', key: 'wide', path: (r) => `/api/v1/channels/${pick(s.channels, r)}/messages` },
    { name: 'history: page before a random recent message', key: 'wide', path: (r) => `/api/v1/channels/${pick(deepChannels, r)}/messages?before=${s.deep.get(pick(deepChannels, r))!.newest}` },
    {
      name: `history: page ${DEEP.toLocaleString('en')} messages deep`,
      key: 'wide',
      path: (r) => {
        const c = pick(deepChannels, r)
        return `/api/v1/channels/${c}/messages?before=${s.deep.get(c)!.deep}`
      },
    },
    { name: `search: top word "${TOP}" (${pctOf(s.counts.top!)})`, key: 'wide', path: search(QUERIES.top) },
    { name: `search: common word "${COMMON}" (${pctOf(s.counts.common!)})`, key: 'wide', path: search(QUERIES.common) },
    { name: `search: rare word (${s.counts.rare} messages)`, key: 'wide', path: search(QUERIES.rare) },
    { name: `search: phrase ${QUERIES.phrase} (${pctOf(s.counts.phrase!)})`, key: 'wide', path: search(QUERIES.phrase) },
    { name: `search: two words "${QUERIES.twoWords}" (${pctOf(s.counts.twoWords!)})`, key: 'wide', path: search(QUERIES.twoWords) },
    { name: `search: "${QUERIES.orWords}" (${pctOf(s.counts.orWords!)})`, key: 'wide', path: search(QUERIES.orWords) },
    { name: 'search: common word, channel_id', key: 'wide', path: search(QUERIES.common, s.channels) },
    { name: 'search: top word, channel_id', key: 'wide', path: search(QUERIES.top, s.channels) },
    { name: 'search: rare word, channel_id', key: 'wide', path: search(QUERIES.rare, s.channels) },
    { name: `search: common word, narrow caller (${NARROW_CHANNELS} channels)`, key: 'narrow', path: search(QUERIES.common) },
    { name: 'search: rare word, narrow caller', key: 'narrow', path: search(QUERIES.rare) },
    { name: 'unread: channel list, 200 channels read to 0-100 back', key: 'wide', path: () => '/api/v1/channels' },
    { name: `unread: channel list, ${NARROW_CHANNELS} channels never read`, key: 'narrow', path: () => '/api/v1/channels' },
  ]
}
const pctOf = (n: number): string => `${n.toLocaleString('en')} messages, ${((100 * n) / MESSAGES).toFixed(2)} %`

/** Keep-alive GET; resolves with the status (0 on a network error) once the body is read. */
function get(agent: http.Agent, base: URL, pathAndQuery: string, key: string): Promise<number> {
  return new Promise((resolve) => {
    const req = http.get({ agent, host: base.hostname, port: base.port, path: pathAndQuery, headers: { authorization: `Bearer ${key}` } }, (res) => {
      res.resume()
      res.on('end', () => resolve(res.statusCode ?? 0))
      res.on('error', () => resolve(0))
    })
    req.on('error', () => resolve(0))
  })
}

interface Measured {
  row: string
  clients: number
  requests: number
  failed: number
  perSecond: number
  p50: number
  p99: number
  max: number
  /** CPU milliseconds per request of the server process and of the database's backends. */
  serverCpuMs: number
  postgresCpuMs: number
  load: string
}

/**
 * CPU seconds so far of the server process and of the PostgreSQL backends connected to the bench
 * database (the pool's connections live through a row): on a shared machine, the cost of a
 * request that the other work does not change, unlike its latency.
 */
async function cpuNow(serverPid: number): Promise<{ server: number; postgres: number }> {
  const client = new pg.Client({ connectionString: databaseUrl(DB_NAME) })
  await client.connect()
  try {
    const { rows } = await client.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()')
    return { server: cpuSecondsOf([serverPid]), postgres: cpuSecondsOf(rows.map((r) => r.pid)) }
  } finally {
    await client.end()
  }
}

async function measure(base: URL, serverPid: number, row: Row, key: string, clients: number): Promise<Measured> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: clients })
  const random = prng(clients * 1000 + row.name.length)
  const limit = MAX_REQUESTS[clients] ?? MAX_REQUESTS[16]!
  // Warm-up: a few requests on each connection (not counted).
  await Promise.all(
    Array.from({ length: clients }, async () => {
      for (let i = 0; i < 3; i++) await get(agent, base, row.path(random), key)
    }),
  )
  const latencies: number[] = []
  let failed = 0
  let started = 0
  const cpu0 = await cpuNow(serverPid)
  const t0 = performance.now()
  const deadline = t0 + SECONDS * 1000
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (started < limit && performance.now() < deadline) {
        started++
        const s = performance.now()
        const status = await get(agent, base, row.path(random), key)
        latencies.push(performance.now() - s)
        if (status !== 200) failed++
      }
    }),
  )
  const elapsed = (performance.now() - t0) / 1000
  const cpu1 = await cpuNow(serverPid)
  agent.destroy()
  latencies.sort((a, b) => a - b)
  const round = (n: number): number => Math.round(n * 10) / 10
  return {
    row: row.name,
    clients,
    requests: latencies.length,
    failed,
    perSecond: Math.round(latencies.length / elapsed),
    p50: round(percentile(latencies, 50)),
    p99: round(percentile(latencies, 99)),
    max: round(latencies.at(-1) ?? NaN),
    serverCpuMs: round(((cpu1.server - cpu0.server) * 1000) / latencies.length),
    postgresCpuMs: round(((cpu1.postgres - cpu0.postgres) * 1000) / latencies.length),
    load: loadavg(),
  }
}

/** The plans of the search statement (for docs/performance.md), run twice: the second is shown. */
async function explain(url: string, s: Seeded): Promise<void> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const { rows: scope } = await client.query<{ channel_id: string }>('SELECT channel_id FROM channel_members WHERE member_id = $1', [s.wide.id])
    for (const [name, q] of Object.entries(QUERIES)) {
      const statement = searchStatement(
        q,
        scope.map((r) => r.channel_id),
        20,
      )
      const run = () => client.query<{ 'QUERY PLAN': string }>({ text: `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${statement.text}`, values: statement.values })
      await run()
      const { rows } = await run()
      // The scope array is 200 ids long: shown as its length.
      const plan = rows.map((r) => r['QUERY PLAN'].replace(/'\{[0-9a-f,-]{200,}\}'::uuid\[\]/g, `'{…${scope.length} ids…}'::uuid[]`))
      console.log(`\n### ${name}: ${JSON.stringify(q)} (${s.counts[name]} matches, load ${loadavg()})\n\n\`\`\`\n${plan.join('\n')}\n\`\`\``)
    }
  } finally {
    await client.end()
  }
}

const loadavg = (): string => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')

function rssMb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return match ? Math.round(Number(match[1]) / 1024) : NaN
}

async function startServer(url: string, dataDir: string): Promise<{ proc: ChildProcess; base: URL }> {
  const port = await freePort()
  const proc = spawn(process.execPath, [...startFlags(SERVER_ROOT), 'src/server.ts'], {
    cwd: SERVER_ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
      DATABASE_URL: url,
      DATA_DIR: dataDir,
      MIGRATE_ON_START: 'false',
      JWT_SECRET: 'bench-secret-bench-secret-bench-secret-00',
      ...SERVER_ENV,
    },
    // The server's log (stdout) is left out: under load it would drown the figures.
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  const base = new URL(`http://127.0.0.1:${port}`)
  const deadline = Date.now() + 60_000
  while (Date.now() < deadline && proc.exitCode === null) {
    if (
      await fetch(new URL('/health', base)).then(
        (r) => r.ok,
        () => false,
      )
    )
      return { proc, base }
    await sleep(100)
  }
  proc.kill('SIGKILL')
  throw new Error('the server did not start')
}

async function stopServer(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null) return
  const exited = new Promise((resolve) => proc.once('exit', resolve))
  proc.kill('SIGTERM')
  await Promise.race([exited, sleep(15_000).then(() => proc.kill('SIGKILL'))])
}

async function databaseReady(): Promise<boolean> {
  if (!REUSE) return false
  const client = new pg.Client({ connectionString: databaseUrl('postgres') })
  await client.connect()
  try {
    const { rows } = await client.query<{ c: string | null }>(`SELECT shobj_description(oid, 'pg_database') AS c FROM pg_database WHERE datname = $1`, [DB_NAME])
    return rows[0]?.c === `${SEED_VERSION} ${MESSAGES} ${CHANNELS} ${AUTHORS}`
  } finally {
    await client.end()
  }
}

async function main(): Promise<void> {
  const url = databaseUrl(DB_NAME)
  console.log(`# ${machine()}; ${MESSAGES.toLocaleString('en')} messages in ${CHANNELS} channels by ${AUTHORS} authors; server from ${SERVER_ROOT}`)
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'ams-bench-history-'))
  let server: { proc: ChildProcess; base: URL } | undefined
  try {
    if (await databaseReady()) {
      console.error(`# reusing the seeded database ${DB_NAME}`)
      // Migrations added since it was seeded (a no-op when there are none).
      await applyMigrations(url)
    } else {
      await adminQuery(`DROP DATABASE IF EXISTS "${DB_NAME}" WITH (FORCE)`)
      await adminQuery(`CREATE DATABASE "${DB_NAME}"`)
      await applyMigrations(url)
      const t0 = performance.now()
      await seed(url)
      console.log(`# seeded in ${Math.round((performance.now() - t0) / 1000)} s (load ${loadavg()})`)
    }
    const seeded = await describe(url)
    console.log(`# matches: ${JSON.stringify(seeded.counts)}`)
    if (EXPLAIN) return await explain(url, seeded)
    server = await startServer(url, dataDir)
    // Warm-up (not counted): the first requests of each kind compile code paths and plans, and
    // a server just started can shed load while it is compiling.
    const warmAgent = new http.Agent({ keepAlive: true, maxSockets: 1 })
    const warmRandom = prng(1)
    for (const row of rows(seeded)) for (let i = 0; i < 5; i++) await get(warmAgent, server.base, row.path(warmRandom), seeded[row.key].key)
    warmAgent.destroy()
    await sleep(2000)
    const rssBefore = rssMb(server.proc.pid!)
    const results: Measured[] = []
    console.log('| request | clients | requests | failed | rate /s | p50 ms | p99 ms | max ms | CPU ms/request: server, PostgreSQL | load (1/5/15 min) |')
    console.log('|---|---|---|---|---|---|---|---|---|---|')
    for (const row of rows(seeded)) {
      if (ONLY.length && !ONLY.some((o) => row.name.startsWith(o))) continue
      for (const clients of CONCURRENCY) {
        const m = await measure(server.base, server.proc.pid!, row, seeded[row.key].key, clients)
        results.push(m)
        console.log(`| ${m.row} | ${m.clients} | ${m.requests} | ${m.failed} | ${m.perSecond} | ${m.p50} | ${m.p99} | ${m.max} | ${m.serverCpuMs}, ${m.postgresCpuMs} | ${m.load} |`)
      }
    }
    const rssAfter = rssMb(server.proc.pid!)
    console.log(`# server RSS: ${rssBefore} MB after start, ${rssAfter} MB at the end`)
    console.log(JSON.stringify({ machine: machine(), messages: MESSAGES, queries: QUERIES, counts: seeded.counts, rssBeforeMb: rssBefore, rssAfterMb: rssAfter, results }))
  } finally {
    if (server) await stopServer(server.proc)
    await rm(dataDir, { recursive: true, force: true })
    if (!KEEP) await adminQuery(`DROP DATABASE IF EXISTS "${DB_NAME}" WITH (FORCE)`).catch(() => {})
  }
}

await main()
