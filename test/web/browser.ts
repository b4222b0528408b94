// Browser tests: playwright-core driving the system's Chromium (Debian's `chromium` package,
// never a downloaded browser) against the real server listening on a free port. Without
// Chromium the tests skip with one line, unless AMS_REQUIRE_BROWSER=1 (CI) makes that a failure.
// Each page collects console errors and warnings (a test fails on any), runs axe-core on request
// (serious and critical violations fail), and saves screenshots under test-output/web/.
import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import rootTap, { type Test } from 'tap'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { build, type BuildTestOptions, type TestApp } from '../helper.ts'
import { webBuildDir } from '../../src/plugins/web.ts'

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
export const SCREENSHOTS = path.resolve(import.meta.dirname, '..', '..', 'test-output', 'web')

/** Why the browser tests cannot run here, or false when they can. */
export function browserSkip(): string | false {
  const missing = !existsSync(CHROMIUM) ? `no Chromium at ${CHROMIUM}` : !webBuildDir() ? 'web UI not built' : null
  if (!missing) return false
  if (process.env.AMS_REQUIRE_BROWSER === '1') throw new Error(`browser tests required (AMS_REQUIRE_BROWSER=1) but ${missing}`)
  return `browser tests skipped: ${missing} (apt-get install -y chromium; npm run web:build; AMS_REQUIRE_BROWSER=1 makes this a failure)`
}

export interface WebServer extends TestApp {
  base: string
}

export async function startServer(t: Test, options: BuildTestOptions = {}): Promise<WebServer> {
  const server = await build(t, options)
  await server.app.listen({ port: 0, host: '127.0.0.1' })
  const address = server.app.server.address()
  const port = typeof address === 'object' && address ? address.port : 0
  return { ...server, base: `http://127.0.0.1:${port}` }
}

let shared: Promise<Browser> | null = null

/**
 * The process's Chromium, launched by the first test that asks (test files run several to a
 * process: test/groups/groups.ts) and closed when the process's tests end. Tests stay apart by
 * their own contexts (openPage), closed with each test.
 */
export async function launch(_t: Test): Promise<Browser> {
  const running = shared && (await shared)
  if (running && running.isConnected()) return running
  shared = (async () => {
    const { chromium } = await import('playwright-core')
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      // No --disable-features here: Chromium keeps only the last one on its command line, so ours
      // would replace the list Playwright passes (PaintHolding, HttpsUpgrades, …) instead of
      // adding to it (docs/decisions.md, "The test suite, round 9").
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-dev-shm-usage'],
    })
    rootTap.teardown(() => browser.close())
    return browser
  })()
  return shared
}

export interface Watched {
  context: BrowserContext
  page: Page
  problems: string[]
}

/** A fresh context (own storage) and page whose console errors and warnings are recorded. */
export async function openPage(t: Test, browser: Browser, options: { width?: number; height?: number; scheme?: 'light' | 'dark' } = {}): Promise<Watched> {
  const context = await browser.newContext({
    viewport: { width: options.width ?? 1280, height: options.height ?? 800 },
    colorScheme: options.scheme ?? 'light',
  })
  t.teardown(() => context.close())
  // The tests are compiled by tsx (esbuild), which wraps named functions in `__name(…)`; a function
  // handed to the page (evaluate, waitForFunction, addInitScript) runs there as its source text,
  // where that helper does not exist. Naming is all it does: the page gets a no-op.
  await context.addInitScript({ content: 'globalThis.__name ??= (target) => target' })
  const page = await context.newPage()
  const problems: string[] = []
  page.on('console', (message) => {
    if (message.type() !== 'error' && message.type() !== 'warning') return
    // The browser's own line for a refused request: the UI shows the refusal in words.
    if (/Failed to load resource: the server responded with a status of (4\d\d)/.test(message.text())) return
    problems.push(`${message.type()}: ${message.text()}`)
  })
  page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`))
  page.setDefaultTimeout(15_000)
  return { context, page, problems }
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

/** Runs axe-core on the page; fails the test on serious or critical violations. */
export async function checkAccessibility(t: Test, page: Page, screen: string): Promise<void> {
  await page.addScriptTag({ content: axeSource })
  // This function runs in the page; the test's TypeScript has no DOM types, hence globalThis.
  const violations = await page.evaluate(async () => {
    const page = globalThis as unknown as {
      document: unknown
      axe: { run: (ctx: unknown, opts: object) => Promise<{ violations: { id: string; impact: string; help: string; nodes: { target: string[] }[] }[] }> }
    }
    const result = await page.axe.run(page.document, { resultTypes: ['violations'] })
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => n.target.join(' ')).slice(0, 3) }))
  })
  const blocking = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
  t.same(blocking, [], `${screen}: no serious or critical accessibility violations`)
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true })
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`) })
}

/** Signs in through the login page. */
export async function signInAs(page: Page, base: string, email: string, password: string): Promise<void> {
  await page.goto(`${base}/login`)
  await page.getByLabel('E-mail').fill(email)
  await page.getByLabel('Password').fill(password)
  await page.getByRole('button', { name: 'Sign in' }).click()
}

/** Starts the page signed in as a seeded person (the session the login page would store). */
export async function signedInContext(page: Page, person: { id: string; email: string; token: string }, role: 'admin' | 'member' | 'observer', isOwner = false): Promise<void> {
  const session = {
    token: person.token,
    user_id: person.id,
    email: person.email,
    display_name: person.email.split('@')[0],
    role,
    is_owner: isOwner,
    expires_at: new Date(Date.now() + 3600_000).toISOString(),
  }
  await page.addInitScript((value) => {
    ;(globalThis as unknown as { localStorage: { setItem: (k: string, v: string) => void } }).localStorage.setItem('ams.session', value)
  }, JSON.stringify(session))
}

/** Where messages are posted; `page.unroute(POSTS)` lets them through again after `dropPosts`. */
export const POSTS = '**/api/v1/channels/*/messages'

/** The network loses every message post of this page (nothing reaches the server); reads still work. */
export async function dropPosts(page: Page, reason: 'internetdisconnected' | 'connectionreset'): Promise<void> {
  await page.route(POSTS, (route) => (route.request().method() === 'POST' ? route.abort(reason) : route.continue()))
}
