// Formatted messages in a real browser: CommonMark + GFM (code blocks with their language class,
// inline code, bold and italic, lists, quotes, tables, autolinks) rendered as elements, never as
// HTML from the message: raw HTML stays text, a `javascript:` link is no link, links open in a new
// tab without opener or referrer; mentions and emoji still work inside formatting; a long code
// line scrolls inside its block while the page does not; the composer previews what it will send.
// And the first visit's JavaScript and CSS stay within 130 KB compressed.
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { gzipSync } from 'node:zlib'
import t from 'tap'
import { bearer, createChannel, seedWorkspace } from '../support/index.ts'
import { webBuildDir } from '../../src/plugins/web.ts'
import { browserSkip, checkAccessibility, launch, openPage, screenshot, signedInContext, startServer } from './browser.ts'

const skip = browserSkip()
const json = { 'content-type': 'application/json' }

const FORMATTED = [
  '**Deploy report** for @member 🚀 with _italic_ and `npm ci`',
  '',
  '- first item',
  '- second with **bold @member**',
  '',
  '> quoted line',
  '',
  '| service | status |',
  '| --- | :---: |',
  '| api | ok ✅ |',
  '',
  '```ts',
  `const line = '${'x'.repeat(300)}'`,
  '```',
  '',
  'See https://example.com/docs and [the guide](https://example.org/guide).',
  '',
  '<img src=x onerror="window.pwned=1"> [bad](javascript:window.pwned=2) <b>raw</b>',
].join('\n')

type Doc = { pwned?: number; document: { documentElement: { scrollWidth: number } } }

t.test('formatted messages', { skip }, async (t) => {
  const { api, app, base } = await startServer(t)
  const ws = await seedWorkspace(app)
  const channel = await createChannel(api, ws.owner.token, 'reports', { description: null, members: [ws.member.id, ws.primary.id] })
  const res = await api({ method: 'POST', url: `/api/v1/channels/${channel.id}/messages`, headers: { ...bearer(ws.primary.key), ...json }, payload: { text: FORMATTED } })
  t.equal(res.statusCode, 201)
  t.same(res.json().mentions, [ws.member.id])
  const browser = await launch(t)

  for (const [width, scheme] of [
    [1280, 'light'],
    [360, 'light'],
    [1280, 'dark'],
  ] as const) {
    await t.test(`rendered safely at ${width} px, ${scheme}`, async (t) => {
      const { page, problems } = await openPage(t, browser, { width, height: width === 360 ? 740 : 800, scheme })
      await signedInContext(page, ws.member, 'member')
      await page.goto(`${base}/c/${channel.id}`)
      const message = page.getByTestId('message').filter({ hasText: 'Deploy report' })
      await message.waitFor()
      const text = message.locator('.message-text')
      t.equal(await text.locator('strong').first().textContent(), 'Deploy report')
      t.equal(await text.locator('em').textContent(), 'italic')
      t.equal(await text.locator('p code').textContent(), 'npm ci', 'inline code')
      t.equal(await text.locator('ul > li').count(), 2, 'a list')
      t.equal(await text.locator('blockquote').textContent(), 'quoted line')
      t.equal(await text.locator('table th').count(), 2, 'a table')
      t.equal(await text.locator('table td').nth(1).textContent(), 'ok ✅', 'emoji inside a table cell')
      t.equal(await text.locator('pre code.language-ts').count(), 1, 'a code block with its language class')
      t.equal(await text.getByTestId('mention-me').count(), 2, 'mentions are marked in a paragraph and inside bold')
      t.match(await text.locator('p').first().textContent(), '🚀', 'emoji kept')

      const links = text.locator('a')
      type Attrs = { getAttribute: (name: string) => string | null }
      t.same(await links.evaluateAll((as) => (as as unknown as Attrs[]).map((a) => [a.getAttribute('href'), a.getAttribute('target'), a.getAttribute('rel')])), [
        ['https://example.com/docs', '_blank', 'noopener noreferrer'],
        ['https://example.org/guide', '_blank', 'noopener noreferrer'],
      ])
      t.equal(await text.locator('img, b').count(), 0, 'raw HTML is not markup')
      t.match(await text.textContent(), '<img src=x onerror="window.pwned=1">', 'raw HTML shows as the text that was written')
      t.match(await text.textContent(), '[bad](javascript:window.pwned=2)', 'a javascript: link stays text')
      t.equal(await page.evaluate(() => (globalThis as unknown as Doc).pwned), undefined, 'nothing ran')

      type Box = { scrollWidth: number; clientWidth: number }
      type Styles = { getComputedStyle: (el: unknown) => { overflowX: string } }
      const code = await text.locator('pre').evaluate((el) => {
        const box = el as unknown as Box
        return { scroll: box.scrollWidth, client: box.clientWidth, overflow: (globalThis as unknown as Styles).getComputedStyle(el).overflowX }
      })
      t.ok(code.scroll > code.client, 'the long line is wider than its block')
      t.equal(code.overflow, 'auto', 'and the block scrolls sideways')
      const page360 = await page.evaluate(() => (globalThis as unknown as Doc).document.documentElement.scrollWidth)
      t.ok(page360 <= width, `the page itself does not overflow (${page360})`)
      await message.scrollIntoViewIfNeeded()
      await checkAccessibility(t, page, `formatted message ${width} ${scheme}`)
      await screenshot(page, `formatting-${width}${scheme === 'dark' ? '-dark' : ''}`)
      t.same(problems, [])
    })
  }

  await t.test('the composer sends plain text and previews it formatted', async (t) => {
    const { page, problems } = await openPage(t, browser, { width: 360, height: 740 })
    await signedInContext(page, ws.member, 'member')
    await page.goto(`${base}/c/${channel.id}`)
    const box = page.getByLabel('Message reports')
    await box.fill('Try **this** and `that`')
    const toggle = page.getByRole('button', { name: 'Preview' })
    await toggle.click()
    t.equal(await toggle.getAttribute('aria-pressed'), 'true')
    const preview = page.getByTestId('composer-preview')
    t.equal(await preview.locator('strong').textContent(), 'this')
    t.equal(await preview.locator('code').textContent(), 'that')
    await screenshot(page, 'formatting-preview-360')
    await box.press('Enter')
    const sent = page.getByTestId('message').filter({ hasText: 'Try this and that' })
    await sent.locator('strong').waitFor()
    const stored = await api({ method: 'GET', url: `/api/v1/channels/${channel.id}/messages?limit=1`, headers: bearer(ws.member.token) })
    t.equal(stored.json().messages[0].text, 'Try **this** and `that`', 'the server stores what was typed')
    t.same(problems, [])
  })

  await t.test('the first visit fetches at most 130 KB of JavaScript and CSS, compressed', async (t) => {
    const { page, problems } = await openPage(t, browser)
    await signedInContext(page, ws.member, 'member')
    const assets: string[] = []
    page.on('request', (request) => {
      const url = new URL(request.url())
      if (/\.(js|css)$/.test(url.pathname)) assets.push(url.pathname)
    })
    await page.goto(`${base}/c/${channel.id}`)
    await page.getByTestId('message').first().waitFor()
    await page.waitForLoadState('networkidle')
    const dir = webBuildDir()!
    // What the server sends compressed is at most gzip's size (brotli is smaller still).
    const sizes = assets.map((asset) => gzipSync(readFileSync(path.join(dir, asset)), { level: 9 }).length)
    const total = sizes.reduce((a, b) => a + b, 0)
    t.ok(total <= 130 * 1024, `first visit: ${(total / 1024).toFixed(1)} KB compressed in ${assets.length} files`)
    t.same(problems, [])
  })
})
