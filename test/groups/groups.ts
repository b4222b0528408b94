// The test suite runs as a few processes, not one per file: each group below imports its test
// files one after another into a single process, so the module graph, the compiled route schemas,
// the OpenAPI validator and Chromium are loaded once per group instead of once per file (a file
// of its own cost about 4 s of CPU before its first assertion; 135 files were a third of the run).
// tap runs the groups (test/groups/*.test.ts) four at a time: most of a group's time is spent
// waiting (timers, browsers, other processes), and with two at a time the CPU was idle 70 % of the run. A file still runs alone as before:
// `npx tap test/conversations/messages.test.ts`.
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import t from 'tap'

export const TEST_DIR = path.resolve(import.meta.dirname, '..')

/**
 * Each group: the shares of test directories it takes. A share is a directory, or, for a directory
 * split over several groups, every `parts`-th of its files from `part`, in name order, so that
 * long and short files mix. A group is one process, and each process pays about 8 s of CPU to
 * start (Node, the loaders, the server's module graph, its first build's schemas: docs/decisions.md,
 * "The test suite, round 7"), so the short areas share one.
 */
export interface Share {
  dir: string
  part?: number
  parts?: number
}

export const GROUPS: Record<string, Share[]> = {
  'basics+hardening': [{ dir: 'contract' }, { dir: 'health' }, { dir: 'unit' }, { dir: 'hardening' }],
  identity: [{ dir: 'identity' }],
  'conversations-1': [{ dir: 'conversations', part: 0, parts: 2 }],
  'conversations-2+realtime-2': [
    { dir: 'conversations', part: 1, parts: 2 },
    { dir: 'realtime', part: 1, parts: 2 },
  ],
  'mcp-2': [{ dir: 'mcp', part: 1, parts: 2 }],
  'platform-1': [{ dir: 'platform', part: 0, parts: 2 }],
  'platform-2+mcp-1': [
    { dir: 'platform', part: 1, parts: 2 },
    { dir: 'mcp', part: 0, parts: 2 },
  ],
  'realtime-1': [{ dir: 'realtime', part: 0, parts: 2 }],
  'web-1': [{ dir: 'web', part: 0, parts: 3 }],
  'web-2': [{ dir: 'web', part: 1, parts: 3 }],
  'web-3': [{ dir: 'web', part: 2, parts: 3 }],
  webhooks: [{ dir: 'webhooks' }],
}

/** The test files of a directory (relative to test/), in name order. */
export const testFiles = (dir: string): string[] =>
  readdirSync(path.join(TEST_DIR, dir))
    .filter((name) => name.endsWith('.test.ts'))
    .sort()
    .map((name) => `${dir}/${name}`)

/**
 * The group a file of test/groups/ runs: `07-identity.test.ts` runs `identity`. The number is the
 * order in which tap starts the groups (by file name): the longest first, measured in a full run,
 * so that no long group starts last and runs alone at the end; but one browser group only among
 * the first four, and never three at once (together each took 170 s instead of 130; with two in
 * the first four, beside the busiest group, a keyboard test's older pages came too slowly). `mcp-2` goes first: where the Python MCP SDK is not
 * installed yet, its pip install alone takes minutes of waiting.
 */
export const groupName = (fileName: string): string => fileName.replace(/\.test\.ts$/, '').replace(/^\d+-/, '')

/** The files of one group. */
export function filesOf(name: string): string[] {
  const group = GROUPS[name]
  if (!group) throw new Error(`no test group ${name} in test/groups/groups.ts`)
  return group.flatMap(({ dir, part = 0, parts = 1 }) => testFiles(dir).filter((_, index) => index % parts === part))
}

/**
 * Runs the group named by the calling file (`test/groups/<name>.test.ts`): its files' tests in
 * order. The files are imported inside a first test, which holds the run open: a file whose top
 * level awaits something slow (looking for a Python SDK) must not find the run already ended
 * because the tests imported before it have finished.
 */
export function runGroup(groupFileUrl: string): void {
  const name = groupName(path.basename(new URL(groupFileUrl).pathname))
  const files = filesOf(name)
  t.test(`the ${name} group loads its ${files.length} files`, async (t) => {
    for (const file of files) await import(pathToFileURL(path.join(TEST_DIR, file)).href)
    t.pass(files.join(', '))
  })
  // What the group cost, for finding where the suite's time goes (docs/decisions.md, "The test
  // suite in groups"): wall time, and CPU of this process and of the children it waited for
  // (Chromium, servers started as processes, pip, npx).
  const started = Date.now()
  // AMS_TEST_CPU=1: each of the group's tests with its own CPU (this process only) and wall time.
  if (process.env.AMS_TEST_CPU === '1') {
    const at = new Map<object, { cpu: number; wall: number }>()
    const cpuNow = (): number => {
      const { user, system } = process.cpuUsage()
      return (user + system) / 1000
    }
    t.beforeEach((child) => void (child.parent === t && at.set(child, { cpu: cpuNow(), wall: Date.now() })))
    t.afterEach((child) => {
      const start = at.get(child)
      if (start) t.comment(`test cpu ${(cpuNow() - start.cpu).toFixed(0)} ms, wall ${Date.now() - start.wall} ms: ${child.name}`)
    })
  }
  t.teardown(() => {
    const own = process.cpuUsage()
    t.comment(`group ${name}: ${((Date.now() - started) / 1000).toFixed(1)} s wall, ${((own.user + own.system) / 1e6).toFixed(1)} s CPU, ${childrenCpuSeconds().toFixed(1)} s CPU in child processes`)
  })
}

/** CPU seconds of the child processes this one has waited for (Linux; 0 elsewhere). */
function childrenCpuSeconds(): number {
  try {
    // Fields 16 and 17 of /proc/self/stat: cutime and cstime, in clock ticks (100 per second).
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ')
    return (Number(fields[13]) + Number(fields[14])) / 100
  } catch {
    return 0
  }
}
