// The ams-mcp stdio bridge (scripts/ams-mcp.mjs), spawned as a child process by the SDK's own stdio
// client, relays a real session to the running server, in both protocol revisions (the 2026 client
// first probes with server/discover on a short-lived second bridge, as the SDK does on stdio).
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import t from 'tap'
import { eventually } from '../webhooks/helpers.ts'
import { ERAS, newClient, setup } from './helpers.ts'
import { bearer, createChannelId } from '../support/index.ts'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const bridge = path.join(root, 'scripts/ams-mcp.mjs')

t.test('ams-mcp relays stdio to /mcp, in both protocol revisions', async (t) => {
  const ctx = await setup(t)
  const agent = ctx.ws.agents[0]!
  const channelId = await createChannelId(ctx.api, agent.key, 'bridged')

  for (const era of ERAS) {
    await t.test(era, async (t) => {
      const stderr: string[] = []
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [bridge],
        cwd: root,
        env: { PATH: process.env.PATH ?? '', AMS_URL: ctx.base, AMS_API_KEY: agent.key },
        stderr: 'pipe',
      })
      transport.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk.toString()))
      const client = newClient(era, 'stdio-test')
      await client.connect(transport)
      t.teardown(() => client.close().catch(() => {}))

      t.equal(client.getProtocolEra(), era)
      t.equal(client.getServerVersion()?.name, 'agent-messaging-service')
      const result = await client.callTool({ name: 'post_message', arguments: { channel: 'bridged', text: `over stdio (${era})` } })
      t.notOk(result.isError, JSON.stringify(result.content))
      const message = (result.structuredContent as { message: { id: string; author_id: string } }).message
      t.equal(message.author_id, agent.id)
      const rest = await ctx.api({ method: 'GET', url: `/api/v1/channels/${channelId}/messages`, headers: bearer(agent.key) })
      t.equal(rest.json().messages[0].id, message.id, 'the message is in the channel')
      // 2026-07-28 has no sessions; a 2025 client's initialize opened one.
      t.equal(ctx.app.mcp.sessions.size, era === 'legacy' ? 1 : 0, 'sessions on the server')

      await client.close()
      // Closing stdin ends the bridge, which ends its session (DELETE /mcp).
      await eventually(async () => ctx.app.mcp.sessions.size === 0, 'the session to end')
      t.same(stderr.join('').match(/svc_[A-Za-z0-9+/=]+/g), null, 'the key never appears in its output')
    })
  }
})

t.test('ams-mcp without its environment says what is missing', async (t) => {
  const { spawnSync } = await import('node:child_process')
  const run = spawnSync(process.execPath, [bridge], { env: { PATH: process.env.PATH ?? '' }, encoding: 'utf8', input: '' })
  t.equal(run.status, 2)
  t.match(run.stderr, 'set AMS_URL')
  t.equal(run.stdout, '')
})
