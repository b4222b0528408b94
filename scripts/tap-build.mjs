#!/usr/bin/env node
// Run before `npm test` (package.json "pretest"): builds tap's Test class with this project's
// plugin list (package.json "tap.plugin") when the installed one was built with another. `npm ci`
// installs the class built with tap's default plugins, @tapjs/typescript among them. tap's runner
// rebuilds it when the lists differ, but only for the processes it starts after it has loaded
// itself with the old class: so on the first run after an install (every CI run) each test process
// was started with ts-node's loader as well as tsx, and loaded the TypeScript compiler, about 7 s of
// CPU each (docs/decisions.md, "The test suite, round 6"). Building first costs about 8 s once;
// when the class is already right, this only compares two strings.
import { spawnSync } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import '@tapjs/core' // before @tapjs/test: the two import each other
import { TapConfig } from '@tapjs/config'
import { signature } from '@tapjs/test'

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)))
const config = await TapConfig.load()
if (signature !== config.pluginSignature) {
  console.log("building tap's test class with this project's plugins (once after an install)")
  const tap = path.join(root, 'node_modules', 'tap', 'dist', 'esm', 'run.mjs')
  const { status } = spawnSync(process.execPath, [tap, 'build'], { cwd: root, stdio: 'inherit' })
  process.exit(status ?? 1)
}
