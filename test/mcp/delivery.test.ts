// An MCP post is an ordinary message: it reaches the other members' WebSockets and webhooks.
// wait_for_events wakes on a post; a subscribed channel resource notifies its subscriber; a file
// by URL is downloaded through the SSRF guard (here private addresses are allowed, as for the
// local webhook receivers).
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { ResourceUpdatedNotification } from '@modelcontextprotocol/client'
import t from 'tap'
import { connect } from '../realtime/helpers.ts'
import { createWebhook, eventually, FAST_ENV, receiver, verifySignature } from '../webhooks/helpers.ts'
import { call, connectClient, INITIALIZE, MCP_HEADERS, mcpUrl, rawPost, setup, structured, textOf } from './helpers.ts'
import { bearer, createChannelId } from '../support/index.ts'

t.test('MCP posts are delivered like any other; the inbox and subscriptions wake', async (t) => {
  const ctx = await setup(t, { env: FAST_ENV })
  const [agent1, agent2] = [ctx.ws.agents[0]!, ctx.ws.agents[1]!]
  const channelId = await createChannelId(ctx.api, agent2.key, 'ops', [agent1.id])
  const { client } = await connectClient(t, ctx.base, agent1.key)

  await t.test('a post through MCP arrives on a WebSocket and at a webhook', async (t) => {
    const rx = await receiver(t)
    const hook = await createWebhook(ctx.api, agent2.key, agent2.id, rx.url('/hook'))
    const { client: socket } = await connect(ctx.app, agent2.key)
    t.teardown(() => socket.close())

    const posted = await call(client, 'post_message', { channel: 'ops', text: 'deploy finished ✓' })
    t.notOk(posted.isError, textOf(posted))
    const message = structured(posted).message

    const frame = await socket.type('new_message', (f) => f.message.id === message.id)
    t.same(frame.message, message, 'the WebSocket frame carries the same message')
    t.equal(frame.channel_id, channelId)

    const [req] = await rx.waitFor(1, (r) => JSON.parse(r.body).payload.message.id === message.id)
    t.ok(verifySignature(hook.secret, req!.body, req!.headers['x-webhook-signature']), 'signed like any delivery')
    t.same(JSON.parse(req!.body).payload, { message })
    t.equal(req!.headers['x-webhook-event'], 'message.created')
  })

  await t.test('wait_for_events wakes on a post and hands back a cursor', async (t) => {
    const start = structured(await call(client, 'wait_for_events', { timeout_seconds: 0 })).next_cursor
    const waiting = call(client, 'wait_for_events', { cursor: start, timeout_seconds: 30 })
    // Post once the wait is parked, so the wake-up (not the first read) delivers it.
    const deadline = Date.now() + 30_000
    while (ctx.app.mcp.inbox.size === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10))
    t.equal(ctx.app.mcp.inbox.size, 1, 'the wait is parked')
    const res = await ctx.api({ method: 'POST', url: `/api/v1/channels/${channelId}/messages`, headers: bearer(agent2.key), payload: { text: 'agent-1, please review' } })
    const result = await waiting
    t.notOk(result.isError)
    const page = structured(result)
    t.equal(page.events.length, 1)
    t.match(page.events[0], { type: 'new_message', channel_id: channelId, message: res.json() })
    t.equal(page.next_cursor, page.events[0].cursor)
    t.equal(page.has_more, false)
    t.match(textOf(result), 'agent-1, please review')

    const after = await call(client, 'wait_for_events', { cursor: page.next_cursor, timeout_seconds: 0 })
    t.same(structured(after).events, [], 'nothing after the cursor')
  })

  await t.test('events of channels the agent is not in never wake it', async (t) => {
    const other = await createChannelId(ctx.api, agent2.key, 'elsewhere')
    const start = structured(await call(client, 'wait_for_events', { timeout_seconds: 0 })).next_cursor
    await ctx.api({ method: 'POST', url: `/api/v1/channels/${other}/messages`, headers: bearer(agent2.key), payload: { text: 'not for agent-1' } })
    const res = await call(client, 'wait_for_events', { cursor: start, timeout_seconds: 1 })
    t.same(structured(res).events, [])
  })

  await t.test('a subscribed channel resource notifies its subscriber', async (t) => {
    const uri = `ams://channels/${channelId}`
    const updates: ResourceUpdatedNotification[] = []
    let notified: () => void = () => {}
    const arrived = new Promise<void>((resolve) => (notified = resolve))
    client.setNotificationHandler('notifications/resources/updated', (n) => {
      updates.push(n)
      notified()
    })
    await client.subscribeResource({ uri })
    await ctx.api({ method: 'POST', url: `/api/v1/channels/${channelId}/messages`, headers: bearer(agent2.key), payload: { text: 'a change worth reading' } })
    await arrived
    t.equal(updates[0]!.params.uri, uri)
    const read = await client.readResource({ uri })
    t.match((read.contents[0] as { text: string }).text, 'a change worth reading')
    await client.unsubscribeResource({ uri })
  })

  await t.test('a file by URL is downloaded and attached', async (t) => {
    const content = Buffer.from('%PDF-1.4 not really a pdf')
    const server = http.createServer((req, res) => {
      if (req.url === '/report.pdf') return res.writeHead(200, { 'content-type': 'application/pdf' }).end(content)
      if (req.url === '/moved') return res.writeHead(302, { location: '/report.pdf' }).end()
      res.writeHead(404).end()
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

    const posted = await call(client, 'post_message', { channel: channelId, text: 'the report', file: { url: `${base}/report.pdf` } })
    t.notOk(posted.isError, textOf(posted))
    const attachment = structured(posted).message.attachment
    t.match(attachment, { file_name: 'report.pdf', content_type: 'application/pdf', size: content.length })
    const download = await ctx.app.inject({ method: 'GET', url: `/api/v1/attachments/${attachment.id}`, headers: bearer(agent2.key) })
    t.same(download.rawPayload, content)

    const count = await ctx.app.db.prisma.message.count({ where: { channelId } })
    t.equal(structured(await call(client, 'post_message', { channel: channelId, text: 'x', file: { url: `${base}/moved` } })).code, 'INVALID_URL', 'redirects are not followed')
    t.equal(structured(await call(client, 'post_message', { channel: channelId, text: 'x', file: { url: `${base}/missing` } })).code, 'INVALID_URL')
    t.equal(await ctx.app.db.prisma.message.count({ where: { channelId } }), count, 'nothing stored')
  })

  await t.test('resumable SSE: a notification missed while the stream was down is replayed with Last-Event-ID', async (t) => {
    const auth = bearer(agent1.key)
    const init = await rawPost(ctx.base, { ...INITIALIZE, params: { ...INITIALIZE.params, protocolVersion: '2025-11-25' } }, auth)
    const session = { ...auth, 'mcp-session-id': init.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-11-25' }
    await init.text()
    t.equal((await rawPost(ctx.base, { jsonrpc: '2.0', method: 'notifications/initialized' }, session)).status, 202)
    const uri = `ams://channels/${channelId}`
    t.match(await (await rawPost(ctx.base, { jsonrpc: '2.0', id: 2, method: 'resources/subscribe', params: { uri } }, session)).text(), '"result":{}')

    const first = await openStream(ctx.base, session)
    await ctx.api({ method: 'POST', url: `/api/v1/channels/${channelId}/messages`, headers: bearer(agent2.key), payload: { text: 'while connected' } })
    const seen = await first.next((e) => e.data.includes('notifications/resources/updated'))
    t.match(seen.id, /\|\d+$/, 'events carry ids')
    first.abort()
    const events = ctx.app.mcp.sessions.get(session['mcp-session-id'])!.events
    const storedBefore = events.stored
    await ctx.api({ method: 'POST', url: `/api/v1/channels/${channelId}/messages`, headers: bearer(agent2.key), payload: { text: 'while away' } })
    // The notification is coalesced for 250 ms, then stored even though no stream is open.
    await eventually(async () => events.stored > storedBefore, 'the missed notification to be stored')

    const resumed = await openStream(ctx.base, { ...session, 'last-event-id': seen.id })
    const missed = await resumed.next((e) => e.data.includes('notifications/resources/updated'))
    t.same(JSON.parse(missed.data), { jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri } })
    t.not(missed.id, seen.id)
    resumed.abort()

    const stranger = await fetch(mcpUrl(ctx.base), { headers: { ...MCP_HEADERS, ...bearer(agent2.key), 'mcp-session-id': session['mcp-session-id'], 'last-event-id': seen.id } })
    t.equal(stranger.status, 404, "another agent cannot resume this session's stream")
  })
})

interface SseEvent {
  id: string
  data: string
}

/** A GET /mcp stream read event by event (a minimal SSE parser, independent of the SDK). */
async function openStream(base: string, headers: Record<string, string>): Promise<{ next: (pred: (e: SseEvent) => boolean) => Promise<SseEvent>; abort: () => void }> {
  const controller = new AbortController()
  const res = await fetch(mcpUrl(base), { headers: { accept: 'text/event-stream', ...headers }, signal: controller.signal })
  if (res.status !== 200) throw new Error(`GET /mcp: ${res.status} ${await res.text()}`)
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader()
  let buffer = ''
  const next = async (pred: (e: SseEvent) => boolean): Promise<SseEvent> => {
    const deadline = Date.now() + 30_000
    for (;;) {
      let end: number
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end)
        buffer = buffer.slice(end + 2)
        const event = { id: '', data: '' }
        for (const line of block.split('\n')) {
          if (line.startsWith('id: ')) event.id = line.slice(4)
          if (line.startsWith('data: ')) event.data += line.slice(6)
        }
        if (pred(event)) return event
      }
      if (Date.now() > deadline) throw new Error('no matching SSE event')
      const { value, done } = await reader.read()
      if (done) throw new Error('the stream ended')
      buffer += value
    }
  }
  return { next, abort: () => controller.abort() }
}
