// The keyboard alone, in a real browser: search and open a result, read the history with the
// keys of the message list, write and edit a message, open and close the members dialog and the
// phone's drawer; the focus is always visible, Escape closes what was opened, and the focus goes
// back to where the person was.
import t from 'tap'
import type { Page } from 'playwright-core'
import { browserSkip, launch, openPage, screenshot, signedInContext, startServer } from './browser.ts'
import { seedMessages } from './seed.ts'
import { createChannel, seedWorkspace } from '../support/index.ts'

const skip = browserSkip()

/** What has the focus: its tag, id, accessible text, and whether the browser draws its focus ring. */
const focused = (page: Page) =>
  page.evaluate(() => {
    type El = { tagName: string; id: string; textContent: string | null; getAttribute: (n: string) => string | null; matches: (s: string) => boolean }
    const doc = globalThis as unknown as { document: { activeElement: El | null }; getComputedStyle: (e: El) => { outlineStyle: string; boxShadow: string } }
    const el = doc.document.activeElement
    if (!el) return null
    const style = doc.getComputedStyle(el)
    return {
      tag: el.tagName.toLowerCase(),
      id: el.id,
      label: el.getAttribute('aria-label') ?? (el.textContent ?? '').trim().slice(0, 60),
      highlighted: el.getAttribute('data-highlighted') === 'true',
      ring: el.matches(':focus-visible') && (style.outlineStyle !== 'none' || style.boxShadow !== 'none'),
    }
  })

async function tabTo(
  page: Page,
  match: (f: NonNullable<Awaited<ReturnType<typeof focused>>>) => boolean,
  max = 40,
  key: 'Tab' | 'Shift+Tab' = 'Tab',
): Promise<NonNullable<Awaited<ReturnType<typeof focused>>>> {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press(key)
    const now = await focused(page)
    if (now && match(now)) return now
  }
  throw new Error('Tab never reached the element')
}

t.test('keyboard only', { skip }, async (t) => {
  const { app, api, base } = await startServer(t)
  const ws = await seedWorkspace(app)
  const channel = await createChannel(api, ws.owner.token, 'general', { description: null, members: [ws.member.id, ws.primary.id] })
  const agent = { id: ws.primary.id, name: 'primary-agent', type: 'AGENT' as const }
  await seedMessages(app, channel.id, 200, (i) => ({ author: agent, text: i === 120 ? 'The keyboard walrus report' : `Line ${i}` }))
  const browser = await launch(t)

  await t.test('desktop', async (t) => {
    const { page, problems } = await openPage(t, browser)
    await signedInContext(page, ws.member, 'member')
    await page.goto(`${base}/c/${channel.id}`)
    await page.getByTestId('message').filter({ hasText: 'Line 199' }).waitFor()

    // Search: the first Tab lands in the search box; Enter searches; Tab reaches the results.
    const box = await tabTo(page, (f) => f.id === 'search-messages', 3)
    t.ok(box.ring, 'the search box shows its focus')
    await page.keyboard.type('walrus')
    await page.keyboard.press('Enter')
    await page.getByTestId('search-hit').first().waitFor()
    t.equal((await focused(page))?.id, 'search-title', 'the focus moved to the results')
    const hit = await tabTo(page, (f) => f.tag === 'a' && f.label.includes('walrus'), 3)
    t.ok(hit.ring, 'the result shows its focus')
    await page.keyboard.press('Enter')
    await page.locator('[data-highlighted="true"]').waitFor()
    const onMessage = await focused(page)
    t.ok(onMessage?.highlighted, 'the message found has the focus')
    t.ok(onMessage?.ring, 'and shows it')
    await screenshot(page, 'keyboard-jump')

    // The message list scrolls with the keyboard, and older pages load as it goes (on a loaded
    // machine a page can take seconds: up to 250 presses before giving up).
    // Back from the message (Shift+Tab): every message has a "Reply in thread" button (threads),
    // so going forward would walk every newer message, scrolling the list to its live end.
    const log = await tabTo(page, (f) => f.label === 'Messages', 80, 'Shift+Tab')
    t.ok(log.ring, 'the message list shows its focus')
    for (
      let i = 0;
      i < 250 &&
      (await page
        .getByTestId('message')
        .filter({ hasText: /Line 40(?!\d)/ })
        .count()) === 0;
      i++
    ) {
      await page.keyboard.press('PageUp')
      await page.waitForTimeout(80)
    }
    await page.getByTestId('message').filter({ hasText: 'Line 40' }).first().waitFor()

    // Back to the newest with the button, then write, send and edit a message.
    await page.getByRole('button', { name: 'Jump to the newest messages' }).focus()
    await page.keyboard.press('Enter')
    await page.getByTestId('message').filter({ hasText: 'Line 199' }).waitFor()
    const composer = await tabTo(page, (f) => f.id === 'composer-text', 80)
    t.ok(composer.ring, 'the composer shows its focus')
    await page.keyboard.type('Typed without a mouse')
    await page.keyboard.press('Enter')
    const mine = page.getByTestId('message').filter({ hasText: 'Typed without a mouse' })
    await mine.waitFor()
    await mine.getByRole('button', { name: 'Edit message' }).focus()
    await page.keyboard.press('Enter')
    await page.keyboard.press('End')
    await page.keyboard.type(', edited')
    await page.keyboard.press('Enter')
    await page.getByTestId('message').filter({ hasText: 'Typed without a mouse, edited' }).filter({ hasText: '(edited)' }).waitFor()
    // The socket's message_updated can show "(edited)" before the save's own answer closes the editor.
    await mine.locator('textarea').waitFor({ state: 'detached' })
    t.equal((await focused(page))?.label, 'Edit message', 'saving gives the focus back to Edit')
    await page.keyboard.press('Enter')
    await page.keyboard.type(' never saved')
    await page.keyboard.press('Escape')
    await page.getByTestId('message').filter({ hasText: 'never saved' }).waitFor({ state: 'detached' })
    t.equal((await focused(page))?.label, 'Edit message', 'Escape cancels and gives the focus back to Edit')

    // The members dialog: opened with Enter, the focus inside it, Escape closes, focus returns.
    await page.getByRole('button', { name: '3 members' }).focus()
    await page.keyboard.press('Enter')
    const dialog = page.getByRole('dialog', { name: 'Members of #general' })
    await dialog.waitFor()
    t.equal((await focused(page))?.tag, 'input', 'the focus is in the dialog, on its name box')
    await page.keyboard.press('ArrowDown')
    const option = await focused(page)
    t.ok(option?.ring && option.label.includes('agent-1'), 'the arrow keys move through the people, focus visible')
    await page.keyboard.press('Escape')
    await dialog.waitFor({ state: 'detached' })
    const back = await focused(page)
    t.equal(back?.label, '3 members', 'the focus is back on the button that opened it')
    t.ok(back?.ring, 'and visible')
    t.same(problems, [])
  })

  await t.test('phone: the drawer', async (t) => {
    const { page, problems } = await openPage(t, browser, { width: 360, height: 740 })
    await signedInContext(page, ws.member, 'member')
    await page.goto(`${base}/c/${channel.id}`)
    await page.getByTestId('message').first().waitFor()
    const toggle = await tabTo(page, (f) => f.label.includes('Conversations'), 5)
    t.ok(toggle.ring)
    await page.keyboard.press('Enter')
    const inDrawer = await page
      .waitForFunction(() => (globalThis as unknown as { document: { activeElement: { id: string } | null } }).document.activeElement?.id === 'search-messages', undefined, { timeout: 5000 })
      .then(
        () => true,
        () => false,
      )
    t.ok(inDrawer, 'opening the drawer moves the focus into it')
    await page.keyboard.press('Escape')
    await page.locator('.drawer-open').waitFor({ state: 'detached' })
    t.match((await focused(page))?.label, 'Conversations', 'Escape closes it and the focus goes back to its button')
    // A dialog opened from the drawer closes alone on Escape.
    await page.keyboard.press('Enter')
    await page.getByRole('button', { name: '+ New message' }).focus()
    await page.keyboard.press('Enter')
    await page.getByRole('dialog', { name: 'New direct message' }).waitFor()
    await page.keyboard.press('Escape')
    await page.getByRole('dialog', { name: 'New direct message' }).waitFor({ state: 'detached' })
    t.equal(await page.locator('.drawer-open').count(), 1, 'the drawer stays open')
    t.equal((await focused(page))?.label, '+ New message')
    t.same(problems, [])
  })
})
