// Unread you can act on, in a real browser: the tab's title and favicon count unread messages
// and unseen mentions; opening a conversation read up to some point shows how many are new, a
// "new messages" line where reading stopped and a jump to it (loading older pages as needed),
// then a jump back to the most recent; the Mentions link carries a badge until the conversation
// is read; desktop notifications, once turned on, announce DMs and mentions; on a phone the
// menu button carries an unread dot.
import t from 'tap'
import { bearer, createChannel, disableLoopGuard, seedWorkspace } from '../support/index.ts'
import { browserSkip, checkAccessibility, launch, openPage, screenshot, signedInContext, startServer } from './browser.ts'
import { seedMessages } from './seed.ts'

const skip = browserSkip()
const json = { 'content-type': 'application/json' }
const HISTORY = 130
const READ_UP_TO = 59

type Notes = { __notes: { title: string; body: string }[] }
type Head = { document: { title: string; querySelector: (s: string) => { dataset: Record<string, string> } | null } }

t.test('unread you can act on', { skip }, async (t) => {
  const { api, app, base } = await startServer(t)
  const ws = await seedWorkspace(app)
  await disableLoopGuard(app)
  const general = await createChannel(api, ws.owner.token, 'general', { description: null, members: [ws.member.id, ws.primary.id] })
  const other = await createChannel(api, ws.owner.token, 'other', { description: null, members: [ws.member.id] })
  const agent = { id: ws.primary.id, name: 'primary-agent', type: 'AGENT' as const }
  const ids = await seedMessages(app, general.id, HISTORY, (i) => ({ author: agent, text: `Message ${i}` }))
  const read = await api({ method: 'PUT', url: `/api/v1/channels/${general.id}/read`, headers: { ...bearer(ws.member.token), ...json }, payload: { message_id: ids[READ_UP_TO] } })
  t.equal(read.json().unread_count, HISTORY - READ_UP_TO - 1)
  const post = async (channelId: string, key: string, text: string) => {
    const res = await api({ method: 'POST', url: `/api/v1/channels/${channelId}/messages`, headers: { ...bearer(key), ...json }, payload: { text } })
    t.equal(res.statusCode, 201)
  }
  const browser = await launch(t)
  const unread = HISTORY - READ_UP_TO - 1

  await t.test('title, favicon, new-messages line and jumps (desktop)', async (t) => {
    const { page, problems } = await openPage(t, browser)
    await signedInContext(page, ws.member, 'member')
    await page.goto(`${base}/c/${other.id}`)
    await page.getByText('No messages yet. Say hello!').waitFor()
    await page.waitForFunction((n) => (globalThis as unknown as Head).document.title === `(${n}) Agent Messaging`, unread)
    const icon = await page.evaluate(() => (globalThis as unknown as Head).document.querySelector('link[rel="icon"]')!.dataset)
    t.equal(icon.unread, String(unread), 'the favicon knows the count (and shows a dot)')

    await page.getByRole('link', { name: /general/ }).click()
    const bar = page.getByTestId('unread-bar')
    await bar.waitFor()
    t.match(await bar.textContent(), `${unread} new messages`)
    await page
      .getByTestId('message')
      .filter({ hasText: `Message ${HISTORY - 1}` })
      .waitFor()
    await bar.getByRole('button', { name: 'Jump to first unread' }).click()
    const line = page.getByTestId('unread-line')
    await line.waitFor()
    await bar.waitFor({ state: 'detached' })
    // The first message after the line is the first one not read.
    const after = await line.evaluate((el) => {
      type Row = { parentElement: Row | null; nextElementSibling: Row | null; textContent: string | null; getAttribute: (n: string) => string | null }
      const row = (el as unknown as Row).parentElement!
      const rows = row.parentElement!
      const index = Number(row.getAttribute('data-index'))
      const next = Array.from((rows as unknown as { children: Row[] }).children).find((r) => Number(r.getAttribute('data-index')) === index + 1)
      return next?.textContent ?? ''
    })
    t.match(after, `Message ${READ_UP_TO + 1}`, 'the line sits right before the first unread message')
    t.ok(await line.isVisible(), 'the line is in view')
    await screenshot(page, 'unread-line-desktop')
    const recent = page.getByRole('button', { name: /Jump to recent/ })
    await recent.click()
    await page
      .getByTestId('message')
      .filter({ hasText: `Message ${HISTORY - 1}` })
      .waitFor()
    await recent.waitFor({ state: 'detached' })
    await page.waitForFunction(() => (globalThis as unknown as Head).document.title === 'Agent Messaging')
    await checkAccessibility(t, page, 'conversation with unread line')
    t.same(problems, [])
  })

  await t.test('mentions badge, notifications, and the phone menu dot (360 px)', async (t) => {
    const { page, problems, context } = await openPage(t, browser, { width: 360, height: 740 })
    await context.grantPermissions(['notifications'], { origin: base })
    // The browser's notifications, recorded instead of shown.
    await page.addInitScript(() => {
      const g = globalThis as unknown as Notes & { Notification: unknown }
      g.__notes = []
      g.Notification = class {
        static permission = 'granted'
        static requestPermission = () => Promise.resolve('granted')
        onclick: unknown = null
        constructor(title: string, options: { body: string }) {
          g.__notes.push({ title, body: options.body })
        }
        close() {}
      }
    })
    await signedInContext(page, ws.member, 'member')
    await page.goto(`${base}/c/${other.id}`)
    await page.getByText('No messages yet. Say hello!').waitFor()
    const empty = await page.getByText('No messages yet. Say hello!').boundingBox()
    t.ok(empty && empty.y >= 0 && empty.y + empty.height <= 740, `an empty conversation says so where it can be seen (${JSON.stringify(empty)})`)
    await page.getByRole('button', { name: 'Conversations', exact: true }).click()
    await page.getByRole('button', { name: 'Turn on desktop notifications' }).click()
    await page.getByRole('button', { name: 'Desktop notifications: on' }).waitFor()
    await page.keyboard.press('Escape')

    await post(general.id, ws.primary.key, '@member please look at the build')
    const dm = await api({ method: 'POST', url: '/api/v1/dm', headers: { ...bearer(ws.agents[0]!.key), ...json }, payload: { participant_id: ws.member.id } })
    await post(dm.json().id, ws.agents[0]!.key, 'a private word')
    await page.waitForFunction(() => (globalThis as unknown as Notes).__notes.length >= 2)
    t.same(
      (await page.evaluate(() => (globalThis as unknown as Notes).__notes)).sort((a, b) => a.title.localeCompare(b.title)),
      [
        { title: 'agent-1', body: 'a private word' },
        { title: 'primary-agent mentioned you', body: '@member please look at the build' },
      ],
      'one notification for the mention, one for the DM',
    )
    await page.getByTestId('menu-unread').waitFor()
    await page.waitForFunction(() => / · 1 @\) Agent Messaging$/.test((globalThis as unknown as Head).document.title))
    await screenshot(page, 'unread-menu-dot-360')
    await page.getByRole('button', { name: /^Conversations/ }).click()
    const badge = page.getByTestId('mentions-badge')
    t.equal(await badge.textContent(), '1 new')
    await screenshot(page, 'unread-sidebar-360')
    await checkAccessibility(t, page, 'sidebar with badges')
    await page.getByRole('link', { name: /Mentions/ }).click()
    await page.getByText('please look at the build').waitFor()
    // Reading the conversation clears the badge (the server acknowledges the mention).
    await page.getByRole('button', { name: /^Conversations/ }).click()
    await page
      .getByRole('navigation', { name: 'Conversations' })
      .getByRole('link', { name: /general/ })
      .click()
    await badge.waitFor({ state: 'detached' })
    t.same(problems, [])
  })
})
