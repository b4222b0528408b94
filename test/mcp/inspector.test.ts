// The MCP Inspector's command-line mode (`@modelcontextprotocol/inspector` 2.12 from npm, run with
// npx: not a dependency of the service) against /mcp in both protocol revisions: it lists the
// tools, calls post_message and receives the post with wait_for_events, with an agent key. Where npx cannot fetch it, the test is skipped
// and says why, or fails under AMS_TEST_REQUIRE_ALL=1 (CI). MCP_INSPECTOR names an installed
// `mcp-inspector` to use instead.
import { execFile } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { bearer, createChannelId } from '../support/index.ts'
import { mcpUrl, setup, testWithTool } from './helpers.ts'

const run = promisify(execFile)
const INSPECTOR = '@modelcontextprotocol/inspector@2.12.0'
/** The Inspector's own executable: npx resolves it once (each `npx` call costs seconds of CPU). */
let command = process.env.MCP_INSPECTOR ?? ''

async function available(): Promise<string | null> {
  try {
    if (!command) command = (await run('npx', ['--yes', '-p', INSPECTOR, '-c', 'command -v mcp-inspector'], { timeout: 240_000 })).stdout.trim()
    await run(command, ['--version'], { timeout: 60_000 })
    return null
  } catch (error) {
    return `the MCP Inspector (${INSPECTOR}) could not be run: ${(error as Error).message.split('\n')[0]}`
  }
}

testWithTool('the MCP Inspector CLI lists tools, posts and waits for events, in both revisions', 'the Inspector test', available(), async (t) => {
  const ctx = await setup(t)
  const agent = ctx.ws.agents[0]!
  const channelId = await createChannelId(ctx.api, agent.key, 'inspected')
  // Its own files (a catalog of servers) go to a scratch home, not the user's.
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'ams-inspector-'))
  t.teardown(() => rm(scratch, { recursive: true, force: true }))
  const inspect = async (era: string, ...args: string[]): Promise<Record<string, unknown>> => {
    const { stdout } = await run(
      command,
      ['--cli', mcpUrl(ctx.base).href, '--transport', 'http', '--protocol-era', era, '--header', `Authorization: Bearer ${agent.key}`, '--format', 'json', '--quiet', ...args],
      { timeout: 60_000, env: { ...process.env, HOME: scratch } },
    )
    return (JSON.parse(stdout) as { result: Record<string, unknown> }).result
  }

  for (const era of ['legacy', 'modern']) {
    await t.test(era, async (t) => {
      const listed = (await inspect(era, '--method', 'tools/list')) as { tools: { name: string; outputSchema?: unknown }[] }
      t.equal(listed.tools.length, 24)
      t.ok(listed.tools.some((tool) => tool.name === 'post_message'))
      t.ok(listed.tools.every((tool) => tool.outputSchema))
      const start = (await inspect(era, '--method', 'tools/call', '--tool-name', 'wait_for_events', '--tool-args-json', '{"timeout_seconds": 0}')) as { structuredContent: { next_cursor: string } }
      t.match(start.structuredContent.next_cursor, /^\d+-\d+$/)
      const text = `posted by the Inspector (${era})`
      const posted = (await inspect(era, '--method', 'tools/call', '--tool-name', 'post_message', '--tool-arg', 'channel=inspected', `text=${text}`)) as {
        isError?: boolean
        structuredContent: { message: { id: string; text: string } }
      }
      t.notOk(posted.isError)
      t.equal(posted.structuredContent.message.text, text)
      const rest = await ctx.api({ method: 'GET', url: `/api/v1/channels/${channelId}/messages/${posted.structuredContent.message.id}`, headers: bearer(agent.key) })
      t.equal(rest.statusCode, 200, 'the post is an ordinary message')
      const waited = (await inspect(
        era,
        '--method',
        'tools/call',
        '--tool-name',
        'wait_for_events',
        '--tool-args-json',
        JSON.stringify({ cursor: start.structuredContent.next_cursor, timeout_seconds: 10 }),
      )) as {
        structuredContent: { events: { type: string; message?: { id: string } }[] }
      }
      t.ok(
        waited.structuredContent.events.some((e) => e.type === 'new_message' && e.message?.id === posted.structuredContent.message.id),
        'wait_for_events returns the post',
      )
    })
  }
})
