// The official Python MCP SDK (`mcp` 2.3, PyPI) against /mcp in both protocol revisions: it lists
// the tools, posts with post_message and receives the post through wait_for_events
// (./python_client.py). The SDK is installed once with pip into a virtual environment under
// ~/.cache/agent-messaging-service (outside the checkout, so `npm ci` keeps it; the first install
// takes minutes on a busy machine). Where there is no Python 3 or pip cannot fetch the SDK, the
// test is skipped and says why, or fails under AMS_TEST_REQUIRE_ALL=1 (CI). MCP_PYTHON names a
// Python that already has `mcp` installed.
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { createChannelId } from '../support/index.ts'
import { mcpUrl, MODERN_VERSION, setup, testWithTool } from './helpers.ts'

const run = promisify(execFile)
const script = path.join(path.dirname(fileURLToPath(import.meta.url)), 'python_client.py')
const PYTHON_SDK = 'mcp==2.3.0'
const VENV = path.join(os.homedir(), '.cache/agent-messaging-service/mcp-python-2.3.0')

/** A Python with the MCP SDK, or why there is none. */
async function python(): Promise<{ bin: string } | { skip: string }> {
  if (process.env.MCP_PYTHON) return { bin: process.env.MCP_PYTHON }
  const bin = path.join(VENV, 'bin/python')
  if (!existsSync(bin)) {
    try {
      await run('python3', ['-m', 'venv', VENV])
    } catch (error) {
      return { skip: `no Python 3 venv here (${(error as Error).message.split('\n')[0]})` }
    }
  }
  try {
    await run(bin, ['-c', 'import mcp'])
    return { bin }
  } catch {
    try {
      // One retry per index, not pip's five with back-off: where the public index is unreachable
      // (a mirror configured beside it), five retries per package made the install outlast its
      // timeout on a loaded machine.
      await run(bin, ['-m', 'pip', 'install', '--quiet', '--retries', '1', PYTHON_SDK], { timeout: 480_000 })
      return { bin }
    } catch (error) {
      return { skip: `pip could not install ${PYTHON_SDK} (${(error as Error).message.split('\n').slice(-2).join(' ')})` }
    }
  }
}

const found = python()

testWithTool(
  'the Python MCP SDK lists tools, posts and waits for events, in both revisions',
  'the Python SDK test',
  found.then((f) => ('skip' in f ? f.skip : null)),
  async (t) => {
    const { bin } = (await found) as { bin: string }
    const ctx = await setup(t)
    const agent = ctx.ws.agents[0]!
    await createChannelId(ctx.api, agent.key, 'python')
    for (const [mode, version] of [
      ['legacy', '2025-11-25'],
      [MODERN_VERSION, MODERN_VERSION],
    ] as const) {
      await t.test(mode, async (t) => {
        const { stdout } = await run(bin, [script, mcpUrl(ctx.base).href, agent.key, mode, 'python'], { timeout: 60_000 })
        const seen = JSON.parse(stdout) as {
          protocol_version: string
          tools: string[]
          output_schemas: boolean
          posted: { message: { id: string; text: string } }
          posted_error: boolean
          events: { type: string; message?: { id: string } }[]
        }
        t.equal(seen.protocol_version, version)
        t.equal(seen.tools.length, 24)
        t.ok(seen.tools.includes('post_message') && seen.tools.includes('wait_for_events'))
        t.equal(seen.output_schemas, true, 'every tool declares an output schema')
        t.equal(seen.posted_error, false)
        t.equal(seen.posted.message.text, `hello from the Python SDK (${mode})`)
        t.ok(
          seen.events.some((e) => e.type === 'new_message' && e.message?.id === seen.posted.message.id),
          'wait_for_events returns the post',
        )
      })
    }
  },
)
