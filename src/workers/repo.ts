// Database access of the delivery workers: raw SQL on the shared pool. PostgreSQL is the source
// of truth for every delivery; queues (in process or a Redis stream) only carry delivery ids.
//
// Claims: a delivery is "claimed" by pushing its next_attempt_at forward by the claim timeout
// (a lease). An attempt begins with a compare-and-set on `attempts`, so a given attempt number
// is made at most once even when a delivery id reaches two workers.
import type pg from 'pg'
import { uuidv7 } from '../lib/ids.ts'
import { eventFromOutbox, type OutboxRow } from '../events/bus.ts'
import type { DomainEvent } from '../events/types.ts'
import type { NewInboxItem } from '../modules/inbox/items.ts'

type Queryable = pg.Pool | pg.PoolClient

export type TargetTable = 'webhooks' | 'integrations'

export interface WebhookTarget {
  id: string
  agentId: string
  events: string[]
  /** Deliver message events of the agent's own messages (docs/loops.md). */
  includeOwnMessages: boolean
  /** `addressed`, `mentions` or null (src/events/filter.ts). */
  only: string | null
  /** Events that occurred before this are not its business (a subscription starts at creation). */
  createdAt: Date
}

export interface IntegrationTarget {
  id: string
  events: string[]
  agentIds: string[]
  /** Acts for any agent (created with no agent list). */
  allAgents: boolean
  /** Deliver messages of the agents it acts for (docs/loops.md). */
  includeOwnMessages: boolean
  /** `addressed`, `mentions` or null (src/events/filter.ts). */
  only: string | null
  createdAt: Date
}

export interface NewDelivery {
  webhookId: string | null
  integrationId: string | null
  eventId: string
  eventType: string
  body: string
}

export interface PlanContext {
  events: DomainEvent[]
  webhooks: WebhookTarget[]
  integrations: IntegrationTarget[]
  dmChannelIds: Set<string>
  /** The DMs among `dmChannelIds` in which an agent takes part. */
  agentDmChannelIds: Set<string>
  /** The agents among the members the events are addressed to (read only when an integration needs it). */
  addressedAgentIds: Set<string>
}

/** The published mark of the rows whose event ids `$2` lists (relayed by this process, not yet marked). */
const publishedMark = (row: string): string => `published_at = CASE WHEN ${row}.published_at IS NULL AND ${row}.event_id = ANY($2::uuid[]) THEN now() ELSE ${row}.published_at END`

/**
 * Marks planned, in one statement and without reading their payloads, the unplanned outbox events
 * (up to `limit`, ids above `afterId`, oldest first, SKIP LOCKED) for which planning has nothing
 * to do: no inbox item (their payload names no addressed member: src/modules/inbox/items.ts) and
 * no active webhook or integration subscribed to their type (planBatch would find no target). A
 * busy channel's messages are such events, and planBatch spent five statements on each batch of
 * them (docs/decisions.md, "The floor carries the contract's message; the planner's idle events
 * in one statement"). Events whose ids `published` lists
 * are marked published by the same update, as planBatch does.
 * Only the idle rows are locked: planBatch, on another connection, must not find the others
 * locked by this statement while its commit is on the way.
 * Returns how many it marked, which of `published` it marked, and whether unplanned events that
 * need planBatch are waiting above `afterId`.
 */
export async function markIdleEvents(pool: pg.Pool, limit: number, afterId: bigint, published: string[]): Promise<{ idle: number; markedPublished: string[]; rest: boolean }> {
  const idle = `NOT (o.payload ? '__addressed')
            AND NOT EXISTS (SELECT 1 FROM webhooks w WHERE w.active AND o.type = ANY (w.events))
            AND NOT EXISTS (SELECT 1 FROM integrations i WHERE i.active AND o.type = ANY (i.events))`
  const { rows } = await pool.query<{ idle: number; marked: string[]; rest: boolean }>(
    `WITH idle AS (
       UPDATE outbox_events u
          SET planned_at = now(),
              ${publishedMark('u')}
        WHERE u.id IN (SELECT o.id FROM outbox_events o WHERE o.planned_at IS NULL AND o.id > $3 AND ${idle} ORDER BY o.id LIMIT $1 FOR UPDATE SKIP LOCKED)
        RETURNING u.event_id::text, u.event_id = ANY($2::uuid[]) AS marked
     )
     SELECT (SELECT count(*) FROM idle)::int AS idle,
            coalesce((SELECT array_agg(event_id) FROM idle WHERE marked), '{}') AS marked,
            EXISTS (SELECT 1 FROM outbox_events o WHERE o.planned_at IS NULL AND o.id > $3 AND NOT (${idle})) AS rest`,
    [limit, published, afterId.toString()],
  )
  const row = rows[0]!
  return { idle: row.idle, markedPublished: row.marked, rest: row.rest }
}

/**
 * Claims up to `limit` unplanned outbox events with ids above `afterId` (the floor:
 * src/events/outbox-floor.ts; oldest first; SKIP LOCKED so instances take different rows), lets
 * `plan` turn them into deliveries and inserts those, all in one transaction: either the events
 * are marked planned and their deliveries exist, or neither.
 * Events whose ids `published()` lists (relayed to the broker by this process, not yet marked;
 * read just before the update) are marked published by the same row update, which saves the
 * relay an UPDATE of those rows.
 * Returns how many events were claimed, how many deliveries were created and which of
 * `published` were marked.
 */
export async function planBatch(
  pool: pg.Pool,
  limit: number,
  afterId: bigint,
  plan: (ctx: PlanContext) => Promise<NewDelivery[]>,
  published: () => string[] = () => [],
  inbox: (events: DomainEvent[]) => NewInboxItem[] = () => [],
): Promise<{ events: number; deliveries: number; markedPublished: string[]; inboxMembers: string[] }> {
  const client = await pool.connect()
  try {
    await client.query('BEGIN')
    const { rows } = await client.query<OutboxRow & { marked: boolean }>(
      `UPDATE outbox_events o
          SET planned_at = now(),
              ${publishedMark('o')}
        WHERE o.id IN (SELECT id FROM outbox_events WHERE planned_at IS NULL AND id > $3 ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED)
        RETURNING o.id::text, o.event_id::text, o.type, o.channel_id::text, o.payload, o.occurred_at, o.event_id = ANY($2::uuid[]) AS marked`,
      [limit, published(), afterId.toString()],
    )
    if (!rows.length) {
      await client.query('COMMIT')
      return { events: 0, deliveries: 0, markedPublished: [], inboxMembers: [] }
    }
    rows.sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1))
    const events = rows.map(eventFromOutbox)
    const types = [...new Set(events.map((e) => e.type))]
    const channelIds = [...new Set(events.map((e) => e.channelId).filter((c): c is string => !!c))]
    // One client runs one query at a time: sequential on purpose.
    const webhooks = await client.query<{ id: string; agent_id: string; events: string[]; include_own_messages: boolean; only: string | null; created_at: Date }>(
      'SELECT id::text, agent_id::text, events, include_own_messages, "only", created_at FROM webhooks WHERE active AND events && $1::text[]',
      [types],
    )
    const integrations = await client.query<{ id: string; events: string[]; all_agents: boolean; include_own_messages: boolean; only: string | null; agent_ids: string[]; created_at: Date }>(
      `SELECT i.id::text, i.events, i.all_agents, i.include_own_messages, i."only", i.created_at, coalesce(array_agg(ia.agent_id::text) FILTER (WHERE ia.agent_id IS NOT NULL), '{}') AS agent_ids
         FROM integrations i LEFT JOIN integration_agents ia ON ia.integration_id = i.id
        WHERE i.active AND i.events && $1::text[]
        GROUP BY i.id`,
      [types],
    )
    const dms =
      channelIds.length && (webhooks.rows.length || integrations.rows.length)
        ? await client.query<{ id: string; with_agent: boolean }>(
            `SELECT c.id::text, EXISTS (SELECT 1 FROM channel_members m WHERE m.channel_id = c.id AND m.member_type = 'AGENT') AS with_agent
               FROM channels c WHERE c.id = ANY($1::uuid[]) AND c.type = 'dm'`,
            [channelIds],
          )
        : { rows: [] as { id: string; with_agent: boolean }[] }
    // The agents among the members events are addressed to (an integration acting for every agent
    // with only=addressed takes the events addressed to any agent).
    const addressedIds = [...new Set(events.flatMap((e) => Object.keys(e.addressed ?? {})))]
    const addressedAgents =
      addressedIds.length && integrations.rows.some((i) => i.only === 'addressed' && i.all_agents)
        ? await client.query<{ id: string }>('SELECT id::text FROM agents WHERE id = ANY($1::uuid[])', [addressedIds])
        : { rows: [] as { id: string }[] }
    const deliveries = await plan({
      addressedAgentIds: new Set(addressedAgents.rows.map((r) => r.id)),
      events,
      webhooks: webhooks.rows.map((w) => ({ id: w.id, agentId: w.agent_id, events: w.events, includeOwnMessages: w.include_own_messages, only: w.only, createdAt: w.created_at })),
      integrations: integrations.rows.map((i) => ({
        id: i.id,
        events: i.events,
        agentIds: i.agent_ids,
        allAgents: i.all_agents,
        includeOwnMessages: i.include_own_messages,
        only: i.only,
        createdAt: i.created_at,
      })),
      dmChannelIds: new Set(dms.rows.map((r) => r.id)),
      agentDmChannelIds: new Set(dms.rows.filter((r) => r.with_agent).map((r) => r.id)),
    })
    const inserted = await insertDeliveries(client, deliveries)
    const inboxMembers = await insertInboxItems(client, inbox(events))
    await client.query('COMMIT')
    return { events: rows.length, deliveries: inserted, markedPublished: rows.filter((r) => r.marked).map((r) => r.event_id), inboxMembers }
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {})
    throw error
  } finally {
    client.release()
  }
}

/**
 * The inbox items of the planned events (docs/realtime.md, "The inbox"), each only if its member
 * belongs to the event's channel now; an item planned twice is inserted once. A person who has
 * already read past the message (the web UI moved the marker before the planner ran) gets the item
 * acknowledged, as moving the marker afterwards would have done (inbox/service.ts acknowledgeRead). Returns the ids of
 * the members who got a new item (their waiting requests are woken after the commit).
 */
async function insertInboxItems(client: Queryable, items: NewInboxItem[]): Promise<string[]> {
  if (!items.length) return []
  const { rows } = await client.query<{ member_id: string }>(
    `INSERT INTO inbox_items (id, member_id, event_id, event_type, kind, channel_id, body, occurred_at, acked_at)
     SELECT i.id, i.member_id, i.event_id, i.event_type, i.kind, i.channel_id, i.body, i.occurred_at,
            CASE WHEN m.member_type = 'HUMAN' AND i.kind IN ('mention', 'dm') AND m.last_read_message_id >= (i.body->'message'->>'id')::uuid THEN now() END
       FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::uuid[], $7::jsonb[], $8::timestamptz[])
            AS i(id, member_id, event_id, event_type, kind, channel_id, body, occurred_at)
       JOIN channel_members m ON m.channel_id = i.channel_id AND m.member_id = i.member_id
        -- The marker is read under a share lock: a read-marker move that commits meanwhile is
        -- seen (the newest row version), and one that comes later waits for this commit, so its
        -- acknowledgement sees the item. Without it the two could miss each other.
        FOR SHARE OF m
     ON CONFLICT (member_id, event_id) DO NOTHING
     RETURNING member_id::text`,
    [
      items.map((i) => i.id),
      items.map((i) => i.memberId),
      items.map((i) => i.eventId),
      items.map((i) => i.eventType),
      items.map((i) => i.kind),
      items.map((i) => i.channelId),
      items.map((i) => i.body),
      items.map((i) => i.occurredAt),
    ],
  )
  return [...new Set(rows.map((r) => r.member_id))]
}

async function insertDeliveries(client: Queryable, deliveries: NewDelivery[]): Promise<number> {
  if (!deliveries.length) return 0
  // Ids are UUIDv7 in event order, so "newest first" by id matches the order events happened.
  const ids = deliveries.map(() => uuidv7())
  const res = await client.query(
    `INSERT INTO deliveries (id, webhook_id, integration_id, event_id, event_type, body, status, attempts, next_attempt_at, created_at, updated_at)
     SELECT d.id, d.webhook_id, d.integration_id, d.event_id, d.event_type, d.body, 'pending', 0, now(), now(), now()
       FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::text[], $6::text[])
            AS d(id, webhook_id, integration_id, event_id, event_type, body)
     ON CONFLICT DO NOTHING`,
    [ids, deliveries.map((d) => d.webhookId), deliveries.map((d) => d.integrationId), deliveries.map((d) => d.eventId), deliveries.map((d) => d.eventType), deliveries.map((d) => d.body)],
  )
  return res.rowCount ?? 0
}

export interface ClaimedDelivery {
  id: string
  attempts: number
  /** The webhook or integration id (src/workers/endpoints.ts); absent in entries queued by older builds. */
  endpoint?: string
}

/**
 * Claims up to `limit` pending deliveries that are due (retry time reached, never queued, or a
 * claim that expired because its worker died) by moving next_attempt_at a lease ahead.
 */
export async function claimDue(pool: pg.Pool, limit: number, leaseMs: number): Promise<ClaimedDelivery[]> {
  if (limit <= 0) return []
  const { rows } = await pool.query<{ id: string; attempts: number; endpoint: string }>(
    `UPDATE deliveries SET next_attempt_at = now() + make_interval(secs => $2::double precision / 1000)
      WHERE id IN (SELECT id FROM deliveries
                    WHERE status = 'pending' AND next_attempt_at <= now()
                    ORDER BY next_attempt_at, id
                    LIMIT $1 FOR UPDATE SKIP LOCKED)
      RETURNING id::text, attempts, coalesce(webhook_id, integration_id)::text AS endpoint`,
    [limit, leaseMs],
  )
  return rows
}

/**
 * Puts a claimed delivery back without making an attempt (its endpoint is at its concurrency
 * limit or its circuit breaker is open): due again in `delayMs`, attempt count unchanged.
 */
export async function deferDelivery(pool: pg.Pool, item: ClaimedDelivery, delayMs: number): Promise<void> {
  await pool.query(
    `UPDATE deliveries SET next_attempt_at = now() + make_interval(secs => $3::double precision / 1000)
      WHERE id = $1 AND status = 'pending' AND attempts = $2`,
    [item.id, item.attempts, delayMs],
  )
}

/** Gives claimed-but-not-started deliveries back (graceful shutdown), so another instance takes them now. */
export async function releaseClaims(pool: pg.Pool, items: ClaimedDelivery[]): Promise<void> {
  if (!items.length) return
  await pool.query(
    `UPDATE deliveries d SET next_attempt_at = now()
       FROM unnest($1::uuid[], $2::int[]) AS r(id, attempts)
      WHERE d.id = r.id AND d.status = 'pending' AND d.attempts = r.attempts`,
    [items.map((i) => i.id), items.map((i) => i.attempts)],
  )
}

/**
 * Gives back a delivery whose attempt was begun but cut short by a graceful stop (the stop's
 * deadline came first): the attempt does not count (as for an unsendable one), and the delivery
 * is due now, for another instance or the next start. The receiver may have had it: the next
 * attempt carries the same delivery id (at least once).
 */
export async function abandonAttempt(pool: pg.Pool, row: AttemptRow): Promise<void> {
  await pool.query(
    `UPDATE deliveries SET attempts = attempts - 1, next_attempt_at = now(), updated_at = now()
      WHERE id = $1 AND attempts = $2 AND status = 'pending'`,
    [row.id, row.attempt],
  )
}

export interface AttemptRow {
  id: string
  webhookId: string | null
  integrationId: string | null
  eventId: string
  eventType: string
  body: string
  /** The number of this attempt (1 for the first). */
  attempt: number
  url: string | null
  secret: string | null
  active: boolean
  disabledReason: string | null
}

/**
 * Starts attempt number `attempts + 1` of a delivery if it is still pending and no other worker
 * started that attempt (compare-and-set on `attempts`); extends the claim for the attempt's
 * duration. Null when the queue item is stale (already attempted, completed or deleted).
 */
export async function beginAttempt(pool: pg.Pool, id: string, attempts: number, leaseMs: number): Promise<AttemptRow | null> {
  const { rows } = await pool.query<{
    id: string
    webhook_id: string | null
    integration_id: string | null
    event_id: string
    event_type: string
    body: string
    attempts: number
    url: string | null
    secret: string | null
    active: boolean | null
    disabled_reason: string | null
  }>(
    `WITH d AS (
       UPDATE deliveries SET attempts = attempts + 1, updated_at = now(),
              next_attempt_at = now() + make_interval(secs => $3::double precision / 1000)
        WHERE id = $1 AND status = 'pending' AND attempts = $2
        RETURNING id, webhook_id, integration_id, event_id, event_type, body, attempts)
     SELECT d.id::text, d.webhook_id::text, d.integration_id::text, d.event_id::text, d.event_type, d.body, d.attempts,
            coalesce(w.url, i.webhook_url) AS url, coalesce(w.secret, i.hmac_secret) AS secret,
            coalesce(w.active, i.active) AS active, coalesce(w.disabled_reason, i.disabled_reason) AS disabled_reason
       FROM d LEFT JOIN webhooks w ON w.id = d.webhook_id LEFT JOIN integrations i ON i.id = d.integration_id`,
    [id, attempts, leaseMs],
  )
  const r = rows[0]
  if (!r) return null
  return {
    id: r.id,
    webhookId: r.webhook_id,
    integrationId: r.integration_id,
    eventId: r.event_id,
    eventType: r.event_type,
    body: r.body,
    attempt: r.attempts,
    url: r.url,
    secret: r.secret,
    active: r.active ?? false,
    disabledReason: r.disabled_reason,
  }
}

export interface AttemptOutcome {
  statusCode: number | null
  error: string | null
  durationMs: number
}

function target(row: AttemptRow): { table: TargetTable; id: string } {
  return row.webhookId ? { table: 'webhooks', id: row.webhookId } : { table: 'integrations', id: row.integrationId! }
}

/** Records a 2xx: the delivery succeeded and its endpoint's failure streak ends (one statement). */
export async function recordSuccess(pool: pg.Pool, row: AttemptRow, outcome: AttemptOutcome): Promise<void> {
  const t = target(row)
  await pool.query(
    `WITH done AS (
       UPDATE deliveries SET status = 'succeeded', last_status_code = $3, last_error = NULL, last_duration_ms = $4,
              next_attempt_at = NULL, completed_at = now(), updated_at = now()
        WHERE id = $1 AND attempts = $2 AND status = 'pending')
     UPDATE ${t.table} SET consecutive_failures = 0, failing_since = NULL
      WHERE id = $5 AND (consecutive_failures <> 0 OR failing_since IS NOT NULL)`,
    [row.id, row.attempt, outcome.statusCode, outcome.durationMs, t.id],
  )
}

export interface DisableRule {
  afterSeconds: number
  minFailures: number
}

/**
 * Records a failed attempt: the delivery waits for its next attempt (`retryAt`) or, when null,
 * becomes failed. The endpoint's failure streak grows; an endpoint failing without a success for
 * `afterSeconds` and at least `minFailures` times is disabled with the reason. Returns whether
 * this attempt disabled it.
 */
export async function recordFailure(pool: pg.Pool, row: AttemptRow, outcome: AttemptOutcome, retryAt: Date | null, rule: DisableRule): Promise<boolean> {
  await pool.query(
    `UPDATE deliveries SET status = CASE WHEN $5::timestamptz IS NULL THEN 'failed'::delivery_status ELSE 'pending'::delivery_status END,
            last_status_code = $3, last_error = $4, last_duration_ms = $6,
            next_attempt_at = $5::timestamptz,
            completed_at = CASE WHEN $5::timestamptz IS NULL THEN now() ELSE NULL END, updated_at = now()
      WHERE id = $1 AND attempts = $2 AND status = 'pending'`,
    [row.id, row.attempt, outcome.statusCode, outcome.error, retryAt, outcome.durationMs],
  )
  const t = target(row)
  const { rows } = await pool.query<{ disabled: boolean }>(
    `UPDATE ${t.table} AS t SET
            consecutive_failures = t.consecutive_failures + 1,
            failing_since = coalesce(t.failing_since, now()),
            active = t.active AND NOT c.disable,
            disabled_at = CASE WHEN c.disable THEN now() ELSE t.disabled_at END,
            disabled_reason = CASE WHEN c.disable THEN
                'disabled after ' || (t.consecutive_failures + 1) || ' consecutive failed deliveries since '
                || to_char(coalesce(t.failing_since, now()) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
                || '; last error: ' || $4
              ELSE t.disabled_reason END
       FROM (SELECT id, (active AND consecutive_failures + 1 >= $2
                         AND coalesce(failing_since, now()) <= now() - make_interval(secs => $3::double precision)) AS disable
               FROM ${t.table} WHERE id = $1 FOR UPDATE) AS c
      WHERE t.id = c.id
      RETURNING c.disable AS disabled`,
    [t.id, rule.minFailures, rule.afterSeconds, outcome.error ?? 'unknown error'],
  )
  return rows[0]?.disabled ?? false
}

/** A delivery whose endpoint is disabled (or gone) is not sent: it fails without an attempt. */
export async function failUnsendable(pool: pg.Pool, row: AttemptRow, reason: string): Promise<void> {
  await pool.query(
    `UPDATE deliveries SET status = 'failed', attempts = attempts - 1, last_error = $3,
            next_attempt_at = NULL, completed_at = now(), updated_at = now()
      WHERE id = $1 AND attempts = $2 AND status = 'pending'`,
    [row.id, row.attempt, reason],
  )
}

/**
 * Merges the messages' full-text index pending list into the index (./search-index.ts);
 * returns how many pages it held.
 */
export async function flushSearchPendingList(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ pages: number }>("SELECT gin_clean_pending_list('messages_search_idx'::regclass)::int AS pages")
  return rows[0]?.pages ?? 0
}

export interface Backlog {
  /** Outbox rows not yet published to the broker. */
  unpublished: number
  /** Outbox rows not yet planned into deliveries. */
  unplanned: number
  /** Pending deliveries due now. */
  due: number
  /** Pending deliveries scheduled later. */
  scheduled: number
}

/** The workspace-wide backlogs of the outbox and the deliveries (metrics; partial indexes keep it cheap). */
export async function backlog(pool: pg.Pool): Promise<Backlog> {
  const { rows } = await pool.query<{ unpublished: string; unplanned: string; due: string; scheduled: string }>(
    `SELECT (SELECT count(*) FROM outbox_events WHERE published_at IS NULL) AS unpublished,
            (SELECT count(*) FROM outbox_events WHERE planned_at IS NULL) AS unplanned,
            (SELECT count(*) FROM deliveries WHERE status = 'pending' AND next_attempt_at <= now()) AS due,
            (SELECT count(*) FROM deliveries WHERE status = 'pending' AND next_attempt_at > now()) AS scheduled`,
  )
  const row = rows[0]!
  return { unpublished: Number(row.unpublished), unplanned: Number(row.unplanned), due: Number(row.due), scheduled: Number(row.scheduled) }
}
