// The compose stack's end-to-end scenario (run by scripts/compose-smoke.sh, which brings the stack
// up and passes the addresses): through nginx, bootstrap a fresh workspace and register a webhook;
// a WebSocket held on instance 1 receives a message posted through instance 2 (cross-instance
// fan-out over Redis), a WebSocket through nginx receives it too, a post through nginx reaches
// both, and the webhook receiver (a container on the stack's network) gets signed deliveries.
//   npx tsx scripts/compose-smoke.ts <nginx base> <app1 base> <app2 base> <receiver base>
import { createHmac, randomUUID } from 'node:crypto'
import WebSocket from 'ws'

const [nginx, app1, app2, receiver] = process.argv.slice(2)
if (!nginx || !app1 || !app2 || !receiver) {
  console.error('usage: compose-smoke.ts <nginx base> <app1 base> <app2 base> <receiver base>')
  process.exit(2)
}

const step = (msg: string): void => console.log(`smoke: ${msg}`)
function fail(msg: string): never {
  console.error(`smoke: FAILED: ${msg}`)
  process.exit(1)
}

async function call(base: string, method: string, path: string, token?: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  })
  const text = await res.text()
  return { status: res.status, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} }
}

interface Socket {
  frames: Record<string, unknown>[]
  close: () => void
}

/** Opens /ws and resolves once the `ready` frame arrived (catch-up done, live from here). */
function openSocket(base: string, token: string, label: string): Promise<Socket> {
  const url = `${base.replace(/^http/, 'ws')}/ws?token=${encodeURIComponent(token)}`
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url)
    const frames: Record<string, unknown>[] = []
    const timer = setTimeout(() => reject(new Error(`${label}: no ready frame within 15 s`)), 15_000)
    ws.on('message', (data) => {
      const frame = JSON.parse((data as Buffer).toString()) as Record<string, unknown>
      frames.push(frame)
      if (frame.type === 'ready') {
        clearTimeout(timer)
        resolve({ frames, close: () => ws.close() })
      }
    })
    ws.on('error', (err) => reject(new Error(`${label}: ${err.message}`)))
    ws.on('unexpected-response', (_req, res) => reject(new Error(`${label}: upgrade answered ${res.statusCode}`)))
  })
}

async function waitFor<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, seconds = 20): Promise<T> {
  const deadline = Date.now() + seconds * 1_000
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) fail(`${what} within ${seconds} s`)
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

const gotMessage = (socket: Socket, id: unknown) => socket.frames.find((f) => f.type === 'new_message' && (f.message as { id?: unknown } | undefined)?.id === id)

async function main(): Promise<void> {
  for (const [label, base] of [
    ['nginx', nginx],
    ['app1', app1],
    ['app2', app2],
  ] as const) {
    const ready = await call(base!, 'GET', '/health/ready')
    if (ready.status !== 200 || ready.json.redis !== 'connected') fail(`${label} /health/ready: ${ready.status} ${JSON.stringify(ready.json)}`)
  }
  step('nginx, app1 and app2 ready (database and Redis connected)')

  const boot = await call(nginx!, 'POST', '/api/v1/bootstrap', undefined, {
    primary_agent: {
      email: 'owner@example.com',
      password: 'compose-smoke-password-123',
      agent_profile: { name: 'primary-agent', display_name: 'Primary Agent' },
    },
    default_channel: { name: 'general', topic: 'compose smoke test' },
  })
  if (boot.status !== 201) fail(`bootstrap through nginx: ${boot.status} ${JSON.stringify(boot.json)} (the stack must be fresh: compose down -v)`)
  const key = boot.json.api_key as string
  const channelId = boot.json.channel_id as string
  const agentId = (boot.json.primary_agent as { agent_id: string }).agent_id
  step(`bootstrapped through nginx (channel ${channelId})`)

  const hook = await call(nginx!, 'POST', `/api/v1/agents/${agentId}/webhooks`, key, {
    url: 'http://webhook-receiver:9000/hook',
    events: ['message.created'],
  })
  if (hook.status !== 201) fail(`webhook registration: ${hook.status} ${JSON.stringify(hook.json)}`)
  const secret = hook.json.secret as string
  step('webhook registered for http://webhook-receiver:9000/hook (allowed by WEBHOOK_ALLOW_HOSTS)')

  const onApp1 = await openSocket(app1!, key, 'WebSocket on app1')
  const viaNginx = await openSocket(nginx!, key, 'WebSocket through nginx')
  step('WebSockets open: one on app1, one through nginx (upgrade passed)')

  const first = await call(app2!, 'POST', `/api/v1/channels/${channelId}/messages`, key, { text: `posted on app2 ${randomUUID()}` })
  if (first.status !== 201) fail(`post on app2: ${first.status} ${JSON.stringify(first.json)}`)
  await waitFor('the post made on app2 reaching the WebSocket on app1', () => gotMessage(onApp1, first.json.id))
  await waitFor('the post made on app2 reaching the WebSocket through nginx', () => gotMessage(viaNginx, first.json.id))
  step('a post made on app2 reached the WebSocket held by app1 and the one through nginx')

  const second = await call(nginx!, 'POST', `/api/v1/channels/${channelId}/messages`, key, { text: `posted through nginx ${randomUUID()}` })
  if (second.status !== 201) fail(`post through nginx: ${second.status} ${JSON.stringify(second.json)}`)
  await waitFor('the post through nginx reaching both WebSockets', () => (gotMessage(onApp1, second.json.id) && gotMessage(viaNginx, second.json.id)) || undefined)
  step('a post through nginx reached both WebSockets')

  interface Received {
    headers: Record<string, string>
    body: string
  }
  const deliveries = await waitFor(
    'both webhook deliveries at the receiver',
    async () => {
      const res = await fetch(`${receiver}/received`)
      const all = (await res.json()) as Received[]
      const ids = new Set(all.map((r) => (JSON.parse(r.body) as { payload: { message: { id: string } } }).payload.message.id))
      return ids.has(first.json.id as string) && ids.has(second.json.id as string) ? all : undefined
    },
    60,
  )
  for (const d of deliveries) {
    const expected = `sha256=${createHmac('sha256', secret).update(d.body).digest('hex')}`
    if (d.headers['x-webhook-signature'] !== expected) fail(`delivery ${d.headers['x-webhook-delivery-id']}: bad signature`)
    if (d.headers['x-webhook-event'] !== 'message.created') fail(`delivery event ${d.headers['x-webhook-event']}`)
  }
  step(`webhook receiver got ${deliveries.length} signed message.created deliveries (signatures verified)`)

  onApp1.close()
  viaNginx.close()
  step('PASSED')
}

main().catch((error: unknown) => fail(error instanceof Error ? error.message : String(error)))
