// The only reader of process.env. Every setting has a default that works on a developer's
// machine; a bad value stops the server at boot with a message naming the variable.
import path from 'node:path'
import { Type, type Static } from 'typebox'
import Value from 'typebox/value'
import { BCRYPT_COST } from './lib/password.ts'

const Bool = Type.Enum(['true', 'false', '1', '0'])

const EnvSchema = Type.Object({
  HOST: Type.String({ default: '127.0.0.1' }),
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3000 }),
  LOG_LEVEL: Type.Enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], { default: 'info' }),
  DATA_DIR: Type.String({ minLength: 1, default: './data' }),
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  DATABASE_POOL_SIZE: Type.Integer({ minimum: 1, maximum: 200, default: 10 }),
  DATABASE_STATEMENT_TIMEOUT_MS: Type.Integer({ minimum: 0, default: 5_000 }),
  DATABASE_QUERY_TIMEOUT_MS: Type.Integer({ minimum: 0, default: 6_000 }),
  MIGRATE_ON_START: Type.Optional(Bool),
  REDIS_URL: Type.Optional(Type.String({ pattern: '^rediss?://' })),
  REDIS_PREFIX: Type.String({ default: 'ams:' }),
  JWT_SECRET: Type.Optional(Type.String({ minLength: 32 })),
  PUBLIC_URL: Type.Optional(Type.String({ pattern: '^https?://' })),
  FRONTEND_URL: Type.Optional(Type.String({ pattern: '^https?://' })),
  UPLOAD_DIR: Type.Optional(Type.String({ minLength: 1 })),
  MAX_FILE_BYTES: Type.Integer({ minimum: 1, default: 10 * 1024 * 1024 }),
  MAX_MESSAGE_LENGTH: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 40_000 }),
  STREAM_IDLE_SECONDS: Type.Integer({ minimum: 1, default: 120 }),
  BODY_LIMIT_BYTES: Type.Integer({ minimum: 1024, default: 1024 * 1024 }),
  RATE_LIMIT_PER_MINUTE: Type.Integer({ minimum: 0, default: 0 }),
  LOGIN_FAILURES_PER_ACCOUNT: Type.Integer({ minimum: 1, default: 10 }),
  LOGIN_FAILURES_PER_ADDRESS: Type.Integer({ minimum: 1, default: 50 }),
  LOGIN_FAILURE_WINDOW_SECONDS: Type.Integer({ minimum: 1, default: 900 }),
  AUTH_CACHE_TTL_MS: Type.Integer({ minimum: 0, default: 10_000 }),
  WS_MESSAGES_PER_SECOND: Type.Integer({ minimum: 1, default: 100 }),
  WS_PING_INTERVAL_MS: Type.Integer({ minimum: 100, default: 30_000 }),
  WS_MAX_PAYLOAD_BYTES: Type.Integer({ minimum: 1024, default: 1024 * 1024 }),
  EVENT_RETENTION: Type.Integer({ minimum: 100, default: 100_000 }),
  EVENT_READ_INTERVAL_MS: Type.Integer({ minimum: 0, maximum: 1_000, default: 3 }),
  GROUP_COMMIT_INTERVAL_MS: Type.Integer({ minimum: 0, maximum: 1_000, default: 3 }),
  WS_AUTH_RECHECK_MS: Type.Integer({ minimum: 100, default: 5_000 }),
  WS_MAX_BUFFERED_BYTES: Type.Integer({ minimum: 1024, default: 4 * 1024 * 1024 }),
  EVENTS_MAX_WAITS_PER_CALLER: Type.Integer({ minimum: 1, maximum: 1_000, default: 4 }),
  SSE_MAX_STREAMS_PER_CALLER: Type.Integer({ minimum: 1, maximum: 1_000, default: 8 }),
  SSE_KEEPALIVE_MS: Type.Integer({ minimum: 50, default: 15_000 }),
  OUTBOX_RELAY_INTERVAL_MS: Type.Integer({ minimum: 50, default: 1_000 }),
  OUTBOX_RELAY_DELAY_MS: Type.Integer({ minimum: 0, default: 2_000 }),
  OUTBOX_RETENTION_MS: Type.Integer({ minimum: 0, default: 86_400_000 }),
  OUTBOX_SCAN_LAG_MS: Type.Integer({ minimum: 0, default: 5_000 }),
  OUTBOX_FULL_SCAN_MS: Type.Integer({ minimum: 100, default: 30_000 }),
  SEARCH_INDEX_FLUSH_MS: Type.Integer({ minimum: 0, default: 5_000 }),
  WEBHOOK_ALLOW_PRIVATE: Type.Optional(Bool),
  WEBHOOK_ALLOW_HOSTS: Type.String({ default: '' }),
  WEBHOOK_RETRY_SCHEDULE: Type.Optional(Type.String({ pattern: '^\\d+(,\\d+)*$' })),
  WEBHOOK_TIMEOUT_MS: Type.Integer({ minimum: 100, default: 10_000 }),
  WEBHOOK_POLL_INTERVAL_MS: Type.Integer({ minimum: 20, default: 1_000 }),
  WEBHOOK_CLAIM_TIMEOUT_MS: Type.Integer({ minimum: 500, default: 15_000 }),
  WEBHOOK_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 256, default: 16 }),
  WEBHOOK_ENDPOINT_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 256, default: 4 }),
  WEBHOOK_BREAKER_FAILURES: Type.Integer({ minimum: 1, default: 5 }),
  WEBHOOK_BREAKER_COOLDOWN_MS: Type.Integer({ minimum: 0, default: 30_000 }),
  WEBHOOK_DISABLE_AFTER_SECONDS: Type.Integer({ minimum: 0, default: 86_400 }),
  WEBHOOK_DISABLE_MIN_FAILURES: Type.Integer({ minimum: 1, default: 10 }),
  SHUTDOWN_TIMEOUT_MS: Type.Integer({ minimum: 100, default: 10_000 }),
  MCP_MAX_SESSIONS: Type.Integer({ minimum: 1, default: 1_000 }),
  MCP_MAX_SESSIONS_PER_CALLER: Type.Integer({ minimum: 1, default: 10 }),
  MCP_SESSION_IDLE_MS: Type.Integer({ minimum: 1_000, default: 30 * 60_000 }),
  MCP_AUTH_RECHECK_MS: Type.Integer({ minimum: 100, default: 5_000 }),
  MCP_ALLOWED_ORIGINS: Type.Optional(Type.String()),
  METRICS_TOKEN: Type.Optional(Type.String({ minLength: 16 })),
  PRESSURE_MAX_EVENT_LOOP_DELAY_MS: Type.Integer({ minimum: 0, default: 1_000 }),
  PRESSURE_MAX_HEAP_USED_BYTES: Type.Optional(Type.Integer({ minimum: 0 })),
  PRESSURE_RETRY_AFTER_SECONDS: Type.Integer({ minimum: 1, default: 10 }),
})

type Env = Static<typeof EnvSchema>

export interface Config {
  host: string
  port: number
  logLevel: string
  dataDir: string
  /** Unset: the server starts an embedded PostgreSQL under dataDir. */
  databaseUrl?: string
  databasePoolSize: number
  /** PostgreSQL's statement_timeout for every pooled connection (0: none). */
  databaseStatementTimeoutMs: number
  /**
   * Client-side bound of a query, for a server that does not answer at all (frozen, network
   * gone) and so cannot enforce its own statement_timeout (0: none).
   */
  databaseQueryTimeoutMs: number
  migrateOnStart: boolean
  /** Unset: single-node mode with an in-process broker. */
  redisUrl?: string
  redisPrefix: string
  /** Unset: generated once and kept in dataDir. */
  jwtSecret?: string
  /** Base address of this API, used in absolute links (attachment downloads). */
  publicUrl: string
  /** Base address of the web front end, used in invite URLs. */
  frontendUrl: string
  uploadDir: string
  maxFileBytes: number
  maxMessageLength: number
  /** A streaming message without an append for this long becomes `interrupted` (issue 25). */
  streamIdleSeconds: number
  bodyLimitBytes: number
  /** 0 = no rate limit (the self-hosted default). */
  rateLimitPerMinute: number
  /**
   * bcrypt cost of new password hashes: 12, as the specification requires. No environment variable
   * sets it; only a program that builds the app itself can (the tests, at a lower cost where they
   * do not test hashing: docs/decisions.md, "The test suite, round 3").
   */
  passwordCost: number
  /** Failed logins allowed per account and per client address within the window (then 429). */
  loginFailuresPerAccount: number
  loginFailuresPerAddress: number
  loginFailureWindowSeconds: number
  /** How long a looked-up agent key is kept (src/plugins/key-cache.ts); 0 = every request asks PostgreSQL. */
  authCacheTtlMs: number
  wsMessagesPerSecond: number
  wsPingIntervalMs: number
  wsMaxPayloadBytes: number
  eventRetention: number
  /** With Redis: the stream read loop reads at most this often under load (0: at once). */
  eventReadIntervalMs: number
  /** Under concurrent posting, a group commit of posts starts at most this often (0: at once). */
  groupCommitIntervalMs: number
  /** How often open sockets' credentials are re-checked (revoked key, expired JWT → closed). */
  wsAuthRecheckMs: number
  /** Send-queue bound per socket: a client that lets more pile up is disconnected. */
  wsMaxBufferedBytes: number
  /** Long polls (GET /api/v1/events?wait=) one agent or user may hold open at once, per instance. */
  eventsMaxWaitsPerCaller: number
  /** Server-Sent Events streams (GET /api/v1/events/stream) one agent or user may hold open at once, per instance. */
  sseMaxStreamsPerCaller: number
  /** Interval of the keep-alive comments on event streams (proxies cut idle responses). */
  sseKeepaliveMs: number
  /** Outbox sweeper: how often it looks for events left unpublished, and how old they must be. */
  outboxRelayIntervalMs: number
  outboxRelayDelayMs: number
  /** Outbox rows already relayed and planned are deleted once older than this. */
  outboxRetentionMs: number
  /** How far behind the outbox scans' floor trails (src/events/outbox-floor.ts). */
  outboxScanLagMs: number
  /** How often an outbox scan starts from the first row instead. */
  outboxFullScanMs: number
  /** How often the full-text index's pending list is merged in the background (0: only by inserts). */
  searchIndexFlushMs: number
  webhookAllowPrivate: boolean
  webhookAllowHosts: string[]
  /** Seconds between delivery attempts; undefined = the documented default schedule. */
  webhookRetrySchedule?: number[]
  webhookTimeoutMs: number
  /** How often each instance plans unplanned outbox events and re-queues due retries. */
  webhookPollIntervalMs: number
  /** A claimed delivery not reported within this time is taken over by another worker. */
  webhookClaimTimeoutMs: number
  /** Delivery attempts in flight per instance. */
  webhookConcurrency: number
  /** Attempts in flight per endpoint (webhook or integration) per instance. */
  webhookEndpointConcurrency: number
  /** Consecutive failed attempts (errors, timeouts) that open an endpoint's circuit breaker… */
  webhookBreakerFailures: number
  /** …for this long, then one probe attempt decides. */
  webhookBreakerCooldownMs: number
  /** An endpoint failing without a success for this long (and at least N times) is disabled. */
  webhookDisableAfterSeconds: number
  webhookDisableMinFailures: number
  /**
   * The bound of a graceful stop, from the signal (src/server.ts): idle connections are closed at
   * a quarter of it, delivery attempts still running are handed back shortly before it, and the
   * process exits at it whatever still runs (docs/operations.md, "Stopping an instance").
   */
  shutdownTimeoutMs: number
  /** MCP endpoint (src/mcp/): open sessions in all, per caller, idle expiry, credential re-check. */
  mcpMaxSessions: number
  mcpMaxSessionsPerCaller: number
  mcpSessionIdleMs: number
  mcpAuthRecheckMs: number
  /**
   * Browser origins /mcp accepts, as host names (a request without `Origin` always passes; `*`
   * accepts any). Default: the hosts of PUBLIC_URL and FRONTEND_URL.
   */
  mcpAllowedOrigins: string[]
  /** Bearer token for GET /metrics; unset = /metrics answers loopback clients only. */
  metricsToken?: string
  /** Load shedding (src/plugins/pressure.ts): mean event-loop delay over a second; 0 = not checked. */
  pressureMaxEventLoopDelayMs: number
  /** Load shedding: V8 heap in use; 0 = not checked. Default: 90 % of the heap limit. */
  pressureMaxHeapUsedBytes?: number
  pressureRetryAfterSeconds: number
}

export class ConfigError extends Error {}

function describe(errors: ReturnType<typeof Value.Errors>): string {
  const lines = errors.map((e) => {
    const name = e.instancePath.replace(/^\//, '') || (e.params as { requiredProperties?: string[] }).requiredProperties?.join(', ') || 'environment'
    return `${name}: ${e.message}`
  })
  return [...new Set(lines)].join('; ')
}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const raw: Record<string, unknown> = {}
  for (const key of Object.keys(EnvSchema.properties)) {
    const value = env[key]
    if (value !== undefined && value !== '') raw[key] = value
  }
  const converted = Value.Convert(EnvSchema, Value.Default(EnvSchema, raw))
  if (!Value.Check(EnvSchema, converted)) {
    throw new ConfigError(`invalid configuration: ${describe(Value.Errors(EnvSchema, converted))}`)
  }
  return fromEnv(converted)
}

const truthy = (v: string | undefined, fallback: boolean): boolean => (v === undefined ? fallback : v === 'true' || v === '1')

/** Host names from a list of host names or origins (`https://app.example.com` → `app.example.com`). */
function allowedOrigins(list: string | undefined, defaults: string[]): string[] {
  const entries = list === undefined ? defaults : list.split(',')
  const hosts = entries
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => (entry.includes('://') && !entry.endsWith('://*') ? hostOf(entry) : entry.toLowerCase()))
  return [...new Set(hosts)]
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname
  } catch {
    throw new ConfigError(`invalid configuration: MCP_ALLOWED_ORIGINS: '${url}' is not a host name or an origin`)
  }
}

function fromEnv(e: Env): Config {
  const dataDir = path.resolve(e.DATA_DIR)
  const publicUrl = (e.PUBLIC_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, '')
  return {
    host: e.HOST,
    port: e.PORT,
    logLevel: e.LOG_LEVEL,
    dataDir,
    databaseUrl: e.DATABASE_URL,
    databasePoolSize: e.DATABASE_POOL_SIZE,
    databaseStatementTimeoutMs: e.DATABASE_STATEMENT_TIMEOUT_MS,
    databaseQueryTimeoutMs: e.DATABASE_QUERY_TIMEOUT_MS,
    migrateOnStart: truthy(e.MIGRATE_ON_START, true),
    redisUrl: e.REDIS_URL,
    redisPrefix: e.REDIS_PREFIX,
    jwtSecret: e.JWT_SECRET,
    publicUrl,
    frontendUrl: (e.FRONTEND_URL ?? publicUrl).replace(/\/+$/, ''),
    uploadDir: path.resolve(e.UPLOAD_DIR ?? path.join(dataDir, 'uploads')),
    maxFileBytes: e.MAX_FILE_BYTES,
    maxMessageLength: e.MAX_MESSAGE_LENGTH,
    streamIdleSeconds: e.STREAM_IDLE_SECONDS,
    bodyLimitBytes: e.BODY_LIMIT_BYTES,
    rateLimitPerMinute: e.RATE_LIMIT_PER_MINUTE,
    passwordCost: BCRYPT_COST,
    loginFailuresPerAccount: e.LOGIN_FAILURES_PER_ACCOUNT,
    loginFailuresPerAddress: e.LOGIN_FAILURES_PER_ADDRESS,
    loginFailureWindowSeconds: e.LOGIN_FAILURE_WINDOW_SECONDS,
    authCacheTtlMs: e.AUTH_CACHE_TTL_MS,
    wsMessagesPerSecond: e.WS_MESSAGES_PER_SECOND,
    wsPingIntervalMs: e.WS_PING_INTERVAL_MS,
    wsMaxPayloadBytes: e.WS_MAX_PAYLOAD_BYTES,
    eventRetention: e.EVENT_RETENTION,
    eventReadIntervalMs: e.EVENT_READ_INTERVAL_MS,
    groupCommitIntervalMs: e.GROUP_COMMIT_INTERVAL_MS,
    wsAuthRecheckMs: e.WS_AUTH_RECHECK_MS,
    wsMaxBufferedBytes: e.WS_MAX_BUFFERED_BYTES,
    eventsMaxWaitsPerCaller: e.EVENTS_MAX_WAITS_PER_CALLER,
    sseMaxStreamsPerCaller: e.SSE_MAX_STREAMS_PER_CALLER,
    sseKeepaliveMs: e.SSE_KEEPALIVE_MS,
    outboxRelayIntervalMs: e.OUTBOX_RELAY_INTERVAL_MS,
    outboxRelayDelayMs: e.OUTBOX_RELAY_DELAY_MS,
    outboxRetentionMs: e.OUTBOX_RETENTION_MS,
    outboxScanLagMs: e.OUTBOX_SCAN_LAG_MS,
    outboxFullScanMs: e.OUTBOX_FULL_SCAN_MS,
    searchIndexFlushMs: e.SEARCH_INDEX_FLUSH_MS,
    webhookAllowPrivate: truthy(e.WEBHOOK_ALLOW_PRIVATE, false),
    webhookAllowHosts: e.WEBHOOK_ALLOW_HOSTS.split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    webhookRetrySchedule: e.WEBHOOK_RETRY_SCHEDULE?.split(',').map(Number),
    webhookTimeoutMs: e.WEBHOOK_TIMEOUT_MS,
    webhookPollIntervalMs: e.WEBHOOK_POLL_INTERVAL_MS,
    webhookClaimTimeoutMs: e.WEBHOOK_CLAIM_TIMEOUT_MS,
    webhookConcurrency: e.WEBHOOK_CONCURRENCY,
    webhookEndpointConcurrency: e.WEBHOOK_ENDPOINT_CONCURRENCY,
    webhookBreakerFailures: e.WEBHOOK_BREAKER_FAILURES,
    webhookBreakerCooldownMs: e.WEBHOOK_BREAKER_COOLDOWN_MS,
    webhookDisableAfterSeconds: e.WEBHOOK_DISABLE_AFTER_SECONDS,
    webhookDisableMinFailures: e.WEBHOOK_DISABLE_MIN_FAILURES,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    mcpMaxSessions: e.MCP_MAX_SESSIONS,
    mcpMaxSessionsPerCaller: e.MCP_MAX_SESSIONS_PER_CALLER,
    mcpSessionIdleMs: e.MCP_SESSION_IDLE_MS,
    mcpAuthRecheckMs: e.MCP_AUTH_RECHECK_MS,
    mcpAllowedOrigins: allowedOrigins(e.MCP_ALLOWED_ORIGINS, [publicUrl, e.FRONTEND_URL ?? publicUrl]),
    metricsToken: e.METRICS_TOKEN,
    pressureMaxEventLoopDelayMs: e.PRESSURE_MAX_EVENT_LOOP_DELAY_MS,
    pressureMaxHeapUsedBytes: e.PRESSURE_MAX_HEAP_USED_BYTES,
    pressureRetryAfterSeconds: e.PRESSURE_RETRY_AFTER_SECONDS,
  }
}
