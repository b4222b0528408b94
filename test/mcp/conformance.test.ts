// The official MCP conformance suite (`@modelcontextprotocol/conformance` 0.1.16, npm) runs its
// server scenarios against /mcp and must match test/mcp/conformance-baseline.yml: every scenario
// not listed there passes, every listed one still fails (a fixed one must leave the list; the
// file says why each one fails). The suite covers 2025-06-18 and 2025-11-25 only (2026-07-28 is
// covered by ./protocol.test.ts and ./revisions.test.ts).
//
// It needs Node 22 (`fs.globSync`); this project runs on Node 20, so npx fetches Node 22 from the
// npm registry (`node-<platform>-<arch>`, a package holding the official binary) next to the
// suite, and its `#!/usr/bin/env node` runs on it. The suite sends no credentials, so a small
// proxy on localhost adds the agent key to every request it forwards. Where npx cannot fetch them,
// the test is skipped and says why, or fails under AMS_TEST_REQUIRE_ALL=1 (CI).
import { execFile } from 'node:child_process'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import type { Test } from 'tap'
import { setup, testWithTool } from './helpers.ts'

const run = promisify(execFile)
const SUITE = '@modelcontextprotocol/conformance@0.1.16'
const NODE = `node-${process.platform}-${process.arch}@22.23.3`
const BASELINE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'conformance-baseline.yml')
const npx = (script: string, timeout: number) => run('npx', ['--yes', '-p', NODE, '-p', SUITE, '-c', script], { timeout, maxBuffer: 16 * 1024 * 1024 })

async function available(): Promise<string | null> {
  try {
    const { stdout } = await npx('node --version && conformance --version', 300_000)
    return stdout.startsWith('v22.') ? null : `npx gave Node ${stdout.split('\n')[0]}, not 22`
  } catch (error) {
    return `the conformance suite (${SUITE} on ${NODE}) could not be run: ${(error as Error).message.split('\n')[0]}`
  }
}

/** Forwards every request to `target`, adding the credential the suite cannot send itself. */
async function credentialProxy(t: Test, target: string, key: string): Promise<string> {
  const upstream = new URL(target)
  const server = http.createServer((req, res) => {
    const forward = http.request({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: { ...req.headers, authorization: `Bearer ${key}` } }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers)
      answer.pipe(res)
    })
    forward.on('error', () => res.destroy())
    res.on('close', () => forward.destroy())
    req.pipe(forward)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => {
    server.closeAllConnections()
    return new Promise<void>((resolve) => server.close(() => resolve()))
  })
  return `http://localhost:${(server.address() as AddressInfo).port}`
}

testWithTool('the MCP conformance suite matches its baseline', 'the conformance test', available(), async (t) => {
  const ctx = await setup(t)
  const proxy = await credentialProxy(t, ctx.base, ctx.ws.agents[0]!.key)
  const result = await npx(`conformance server --url ${proxy}/mcp --expected-failures ${BASELINE}`, 240_000).then(
    ({ stdout }) => ({ code: 0, stdout }),
    (error: { code?: number; stdout?: string }) => ({ code: error.code ?? -1, stdout: error.stdout ?? '' }),
  )
  t.comment(
    result.stdout
      .split('\n')
      .filter((line) => /scenario|passed|failed|baseline|regression|stale/i.test(line))
      .join('\n'),
  )
  t.equal(result.code, 0, 'no unexpected failure, no stale baseline entry')
})
