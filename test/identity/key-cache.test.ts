// The agent-key cache (src/plugins/key-cache.ts): a busy key skips PostgreSQL, yet revoking it,
// deleting its agent or renaming the agent takes effect from the next request, on this instance
// and on another one sharing Redis, including when the other instance's subscription dropped
// while the key was revoked, or Redis stalled.
import { Redis } from 'ioredis'
import t, { type Test } from 'tap'
import { needsRedis, needsRedisServer } from '../setup/services.ts'
import { LEASE_MS, subscriberName } from '../../src/plugins/key-cache.ts'
import { build, TEST_REDIS_URL, testConfig, type TestApp } from '../helper.ts'
import { freePort, startRedis } from '../realtime/helpers.ts'
import { eventually } from '../webhooks/helpers.ts'
import { bearer, createChannelId, post, seedWorkspace, type Workspace } from '../support/index.ts'

type Api = TestApp['api']

const me = async (api: Api, key: string): Promise<number> => (await api({ method: 'GET', url: '/api/v1/agents/me', headers: bearer(key) })).statusCode

async function newKey(api: Api, ownerToken: string, agentId: string): Promise<{ id: string; key: string }> {
  const res = await api({ method: 'POST', url: `/api/v1/agents/${agentId}/keys`, headers: bearer(ownerToken), payload: { name: 'cached' } })
  if (res.statusCode !== 201) throw new Error(`create key: ${res.statusCode} ${res.body}`)
  return res.json()
}

async function revoke(api: Api, ownerToken: string, agentId: string, keyId: string): Promise<void> {
  const res = await api({ method: 'DELETE', url: `/api/v1/agents/${agentId}/keys/${keyId}`, headers: bearer(ownerToken) })
  if (res.statusCode !== 204) throw new Error(`revoke: ${res.statusCode} ${res.body}`)
}

/** Two apps on one database and one Redis prefix, as two instances of one workspace. */
async function twoInstances(t: Test): Promise<{ one: TestApp; two: TestApp; ws: Workspace; prefix: string }> {
  const config = await testConfig(t, { redis: true })
  const shared = { databaseUrl: config.databaseUrl, redis: true, redisPrefix: config.redisPrefix, background: false }
  const one = await build(t, shared)
  const two = await build(t, shared)
  const ws = await seedWorkspace(one.app)
  await eventually(async () => one.app.keyCache.trusted && two.app.keyCache.trusted, 'both subscriptions')
  return { one, two, ws, prefix: config.redisPrefix }
}

t.test('single node: a used key is cached; revoking, renaming and deleting apply from the next request', async (t) => {
  const { app, api } = await build(t)
  const ws = await seedWorkspace(app)
  const [a1, a2] = ws.agents as [(typeof ws.agents)[0], (typeof ws.agents)[0]]
  t.equal(app.keyCache.size, 0)
  t.equal(await me(api, a1.key), 200)
  t.equal(app.keyCache.size, 1, 'the key is kept after its first request')
  t.equal(await me(api, a1.key), 200)
  t.equal(app.keyCache.size, 1)

  const channel = await createChannelId(api, ws.primary.key, 'cached', [a1.id])
  t.equal((await post(api, a1.key, channel, 'before')).author_name, a1.name)
  const renamed = await api({ method: 'PATCH', url: `/api/v1/agents/${a1.id}`, headers: bearer(ws.owner.token), payload: { display_name: 'Renamed One' } })
  t.equal(renamed.statusCode, 200)
  t.equal((await post(api, a1.key, channel, 'after')).author_name, 'Renamed One', 'the next message carries the new name')

  const extra = await newKey(api, ws.owner.token, a1.id)
  t.equal(await me(api, extra.key), 200)
  await revoke(api, ws.owner.token, a1.id, extra.id)
  t.equal(await me(api, extra.key), 401, 'a revoked key is refused from its next request')
  t.equal(await me(api, a1.key), 200, "the agent's other key still works")

  t.equal(await me(api, a2.key), 200)
  t.equal((await api({ method: 'DELETE', url: `/api/v1/agents/${a2.id}`, headers: bearer(ws.owner.token) })).statusCode, 204)
  t.equal(await me(api, a2.key), 401, "a deleted agent's key is refused from its next request")
})

t.test('entries expire after AUTH_CACHE_TTL_MS; 0 turns the cache off', async (t) => {
  // Long enough that the two requests below fit in it on a loaded machine.
  const short = await build(t, { env: { AUTH_CACHE_TTL_MS: '1500' } })
  const ws = await seedWorkspace(short.app)
  const a1 = ws.agents[0]!
  t.equal(await me(short.api, a1.key), 200)
  // Revoked behind the service's back (an operator's SQL): only expiry can catch it.
  await short.app.db.pool.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [a1.keyId])
  t.equal(await me(short.api, a1.key), 200, 'served from the cache until it expires')
  await new Promise((resolve) => setTimeout(resolve, 1_600))
  t.equal(await me(short.api, a1.key), 401, 'refused once the entry expired')

  const off = await build(t, { env: { AUTH_CACHE_TTL_MS: '0' } })
  const ws2 = await seedWorkspace(off.app)
  const b1 = ws2.agents[0]!
  t.equal(await me(off.api, b1.key), 200)
  t.equal(off.app.keyCache.size, 0, 'nothing kept')
  await off.app.db.pool.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [b1.keyId])
  t.equal(await me(off.api, b1.key), 401, 'every request reads the database')
})

t.test('two instances over Redis: a change made on one applies on the other from its next request', { skip: needsRedis() }, async (t) => {
  const { one, two, ws } = await twoInstances(t)
  const [a1, a2] = ws.agents as [(typeof ws.agents)[0], (typeof ws.agents)[0]]

  for (let i = 0; i < 10; i++) {
    const key = await newKey(one.api, ws.owner.token, a1.id)
    t.equal(await me(two.api, key.key), 200)
    t.equal(await me(two.api, key.key), 200)
    const started = performance.now()
    await revoke(one.api, ws.owner.token, a1.id, key.id)
    // The proof in src/plugins/key-cache.ts needs the answer to wait out the lease (timers may
    // fire up to a millisecond early).
    t.ok(performance.now() - started >= LEASE_MS - 2, `key ${i}: the revocation answered after the lease`)
    t.equal(await me(two.api, key.key), 401, `key ${i}: revoked on one, refused on two at once`)
  }

  const channel = await createChannelId(two.api, ws.primary.key, 'two', [a1.id])
  t.equal((await post(two.api, a1.key, channel, 'before')).author_name, a1.name)
  const renamed = await one.api({ method: 'PATCH', url: `/api/v1/agents/${a1.id}`, headers: bearer(ws.owner.token), payload: { display_name: 'Renamed On One' } })
  t.equal(renamed.statusCode, 200)
  t.equal((await post(two.api, a1.key, channel, 'after')).author_name, 'Renamed On One')

  t.equal(await me(two.api, a2.key), 200)
  t.equal((await one.api({ method: 'DELETE', url: `/api/v1/agents/${a2.id}`, headers: bearer(ws.owner.token) })).statusCode, 204)
  t.equal(await me(two.api, a2.key), 401)
})

t.test("a revocation published while the other instance's subscription was down still applies there", { skip: needsRedis() }, async (t) => {
  const { one, two, ws, prefix } = await twoInstances(t)
  const a1 = ws.agents[0]!
  const key = await newKey(one.api, ws.owner.token, a1.id)
  t.equal(await me(two.api, key.key), 200)
  t.equal(two.app.keyCache.size, 1)

  const admin = new Redis(TEST_REDIS_URL)
  t.teardown(() => admin.quit())
  // Both instances' subscribers (they share the prefix, so the name); their other connections stay.
  const list = String(await admin.client('LIST'))
  const ids = [...list.matchAll(/^id=(\d+) .*\bname=(\S*)/gm)].filter((m) => m[2] === subscriberName(prefix)).map((m) => m[1]!)
  t.equal(ids.length, 2, 'one subscriber per instance')
  for (const id of ids) await admin.client('KILL', 'ID', id)
  await eventually(async () => !two.app.keyCache.trusted, 'instance two notices')
  t.equal(two.app.keyCache.size, 0, 'nothing cached survives a lost subscription')

  // Published at once, while instance two waits 200 ms before it reconnects (src/plugins/redis.ts).
  await revoke(one.api, ws.owner.token, a1.id, key.id)
  t.equal(await me(two.api, key.key), 401, 'refused')
  await eventually(async () => two.app.keyCache.trusted, 'instance two subscribes again')
  t.equal(await me(two.api, key.key), 401, 'and refused once it is subscribed again')
  t.equal(await me(two.api, a1.key), 200)
  t.equal(await me(two.api, a1.key), 200)
  t.equal(two.app.keyCache.size, 1, 'caching resumes')
})

t.test('a stalled Redis: the lease runs out and keys are read from the database until it answers again', { skip: needsRedisServer() }, async (t) => {
  const port = await freePort()
  const redis = startRedis(t, port)
  const { app, api } = await build(t, { env: { REDIS_URL: `redis://127.0.0.1:${port}`, REDIS_PREFIX: 'ams:stall:' } })
  const ws = await seedWorkspace(app)
  const a1 = ws.agents[0]!
  await eventually(async () => app.keyCache.trusted, 'the subscription and its lease')
  t.equal(await me(api, a1.key), 200)
  t.equal(app.keyCache.size, 1)

  // Stopped, not killed: the connection stays open, so only the lease can tell.
  redis.proc.kill('SIGSTOP')
  await eventually(async () => !app.keyCache.trusted, 'the lease to run out')
  // A revocation whose forget could not be delivered (made in SQL, so none is sent at all).
  await app.db.pool.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [a1.keyId])
  t.equal(await me(api, a1.key), 401, 'read from the database, not the cache')
  const a2 = ws.agents[1]!
  t.equal(await me(api, a2.key), 200, 'other keys still work')
  // Revoking through the API does not hang on the stalled Redis: the publish gives up after 1 s.
  await revoke(api, ws.owner.token, a2.id, a2.keyId)
  t.equal(await me(api, a2.key), 401)

  redis.proc.kill('SIGCONT')
  await eventually(async () => app.keyCache.trusted, 'a new lease')
  t.equal(await me(api, ws.primary.key), 200)
  t.equal(app.keyCache.size, 2, 'caching resumes (a forget sent meanwhile would have arrived first, in order)')
})
