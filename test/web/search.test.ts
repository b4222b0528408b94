// Search in a real browser: highlighted results from every conversation one can read; opening
// one jumps to the message in its channel, loading the page around it (not the newest page),
// highlights it and scrolls it into view; from there the history scrolls both ways, back to the
// live end where new messages arrive again.
import t from 'tap'
import type { Page } from 'playwright-core'
import { browserSkip, checkAccessibility, launch, openPage, screenshot, signedInContext, startServer } from './browser.ts'
import { seedMessages } from './seed.ts'
import { bearer, createChannel, seedWorkspace } from '../support/index.ts'

const skip = browserSkip()
const json = { 'content-type': 'application/json' }

/** Scrolls the message list a screenful at a time until `text` is on the page (pages load on the way). */
export async function scrollUntil(page: Page, direction: 'up' | 'down', text: string, steps = 200): Promise<number> {
  const target = page.getByTestId('message').filter({ hasText: text })
  for (let step = 0; step < steps; step++) {
    if ((await target.count()) > 0) return step
    await page.getByRole('log', { name: 'Messages' }).evaluate((el, up) => {
      const box = el as unknown as { scrollTop: number; clientHeight: number }
      box.scrollTop += (up ? -0.8 : 0.8) * box.clientHeight
    }, direction === 'up')
    await page.waitForTimeout(100)
  }
  throw new Error(`"${text}" did not come into the list after ${steps} screens ${direction}`)
}

t.test('search jumps to the message in its channel', { skip }, async (t) => {
  const { app, api, base } = await startServer(t)
  const ws = await seedWorkspace(app)
  const history = await createChannel(api, ws.owner.token, 'history', { description: null, members: [ws.member.id, ws.primary.id] })
  const other = await createChannel(api, ws.owner.token, 'other', { description: null, members: [ws.member.id, ws.primary.id] })
  const agent = { id: ws.primary.id, name: 'primary-agent', type: 'AGENT' as const }
  const person = { id: ws.member.id, name: 'member', type: 'HUMAN' as const }
  // 300 messages; number 150 is the one to find, far from the newest page.
  const ids = await seedMessages(app, history.id, 300, (i) => ({
    author: i % 3 === 0 && i !== 150 ? person : agent,
    text: i === 150 ? 'The quarterly zephyr report is ready <for review> & signed' : `History message ${i}`,
  }))
  const target = ids[150]!
  await seedMessages(app, other.id, 1, () => ({ author: agent, text: 'A zephyr in the other channel' }))
  const browser = await launch(t)

  const { page, problems } = await openPage(t, browser)
  await signedInContext(page, ws.member, 'member')
  const listed: string[] = []
  page.on('request', (request) => {
    const url = new URL(request.url())
    if (url.pathname.startsWith(`/api/v1/channels/${history.id}/messages`)) listed.push(url.pathname.replace(`/api/v1/channels/${history.id}/messages`, '') + url.search)
  })
  await page.goto(`${base}/c/${history.id}`)
  await page.getByTestId('message').filter({ hasText: 'History message 299' }).waitFor()

  const box = page.getByRole('searchbox', { name: 'Search messages' })
  await box.fill('zephyr')
  await box.press('Enter')
  const hits = page.getByTestId('search-hit')
  await hits.first().waitFor()
  t.equal(await hits.count(), 2, 'both conversations')
  t.match(page.url(), /\/search\?q=zephyr$/)
  const hit = hits.filter({ hasText: '#history' })
  t.equal(
    await hit
      .locator('mark')
      .allTextContents()
      .then((m) => m.join('|')),
    'zephyr',
    'the matched word is highlighted',
  )
  t.match(await hit.locator('.snippet').textContent(), 'quarterly zephyr report is ready <for review> & signed', 'the text is shown as text, markup and all')
  t.match(await hit.textContent(), /primary-agent\s*AGENT/, "the agent's AGENT badge")
  await checkAccessibility(t, page, 'search results')
  await screenshot(page, 'search-desktop')

  listed.length = 0
  await hit.click()
  const jumped = page.locator('[data-highlighted="true"]')
  await jumped.waitFor()
  t.match(page.url(), `/c/${history.id}?message=${target}`)
  t.match(await jumped.textContent(), 'zephyr', 'the message found is highlighted')
  t.ok(await jumped.evaluate((el) => (el as unknown as { ownerDocument: { activeElement: unknown } }).ownerDocument.activeElement === el), 'and focused')
  // In view: inside the visible part of the list.
  const list = await page.getByRole('log', { name: 'Messages' }).boundingBox()
  const spot = await jumped.boundingBox()
  t.ok(list && spot && spot.y >= list.y && spot.y + spot.height <= list.y + list.height, 'scrolled into view')
  t.same(listed.filter((u) => !u.startsWith('?')).sort(), [`/${target}`], 'the message itself was fetched')
  t.same(
    listed.filter((u) => u.startsWith('?')).sort(),
    [`?limit=25&after=${target}&threads=roots`, `?limit=25&before=${target}&threads=roots`].sort(),
    'and the page around it (roots: replies are read in their thread), not the newest page',
  )
  t.equal(await page.getByTestId('message').filter({ hasText: 'History message 149' }).count(), 1, 'its neighbours are there')
  t.equal(await page.getByTestId('message').filter({ hasText: 'History message 299' }).count(), 0, 'the newest are not')
  await page.getByText('You are reading older messages.').waitFor()
  await checkAccessibility(t, page, 'jumped to a message')
  await screenshot(page, 'search-jump-desktop')

  // Back in time: older pages load on the way up.
  listed.length = 0
  await scrollUntil(page, 'up', 'History message 60')
  t.ok(
    listed.some((u) => u.includes('before=')),
    'older pages were fetched',
  )
  // Forward: newer pages load on the way down, to the live end.
  listed.length = 0
  await scrollUntil(page, 'down', 'History message 299')
  t.ok(
    listed.some((u) => u.includes('after=')),
    'newer pages were fetched',
  )
  await page.getByText('You are reading older messages.').waitFor({ state: 'detached' })
  // At the live end, new messages arrive live again.
  const res = await api({ method: 'POST', url: `/api/v1/channels/${history.id}/messages`, headers: { ...bearer(ws.primary.key), ...json }, payload: { text: 'Fresh news after the jump' } })
  t.equal(res.statusCode, 201)
  await page.getByTestId('message').filter({ hasText: 'Fresh news after the jump' }).waitFor()
  const texts = await page.getByTestId('message').locator('.message-text').allTextContents()
  t.equal(new Set(texts).size, texts.length, 'no message twice')

  // "Jump to the newest messages" leaves an older page.
  await page.goto(`${base}/c/${history.id}?message=${ids[10]}`)
  await page.locator('[data-highlighted="true"]').filter({ hasText: 'History message 10' }).waitFor()
  await page.getByRole('button', { name: 'Jump to the newest messages' }).click()
  await page.getByTestId('message').filter({ hasText: 'Fresh news after the jump' }).waitFor()
  t.notMatch(page.url(), 'message=')

  // A message that no longer exists: said in words, with the way back.
  await page.goto(`${base}/c/${history.id}?message=01900000-0000-7000-8000-000000000000`)
  await page.getByText('That message could not be opened: it may have been deleted.').waitFor()
  await page.getByRole('button', { name: 'Jump to the newest messages' }).waitFor()

  // Nothing found, in words.
  await box.fill('nonexistentword')
  await box.press('Enter')
  await page.getByText('No messages match “nonexistentword”.').waitFor()
  t.same(problems, [])

  // A phone: the search box is in the drawer; the results and the jump fit 360 px.
  const phone = await openPage(t, browser, { width: 360, height: 740 })
  await signedInContext(phone.page, ws.member, 'member')
  await phone.page.goto(`${base}/c/${history.id}`)
  await phone.page.getByRole('button', { name: 'Conversations' }).click()
  await phone.page.getByRole('searchbox', { name: 'Search messages' }).fill('zephyr')
  await phone.page.getByRole('searchbox', { name: 'Search messages' }).press('Enter')
  await phone.page.getByTestId('search-hit').first().waitFor()
  await checkAccessibility(t, phone.page, 'search results at 360 px')
  await screenshot(phone.page, 'search-360')
  await phone.page.getByTestId('search-hit').filter({ hasText: '#history' }).click()
  await phone.page.locator('[data-highlighted="true"]').waitFor()
  await screenshot(phone.page, 'search-jump-360')
  t.same(phone.problems, [])

  // Dark theme: the highlights keep their contrast.
  const dark = await openPage(t, browser, { scheme: 'dark' })
  await signedInContext(dark.page, ws.member, 'member')
  await dark.page.goto(`${base}/search?q=zephyr`)
  await dark.page.getByTestId('search-hit').first().waitFor()
  await checkAccessibility(t, dark.page, 'search results, dark')
  await screenshot(dark.page, 'search-dark')
  await dark.page.goto(`${base}/c/${history.id}?message=${target}`)
  await dark.page.locator('[data-highlighted="true"]').waitFor()
  await checkAccessibility(t, dark.page, 'jumped to a message, dark')
  await screenshot(dark.page, 'search-jump-dark')
  t.same(dark.problems, [])
})
