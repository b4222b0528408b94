// People's presence and the mentions badge, in a real browser against the real server.
// Presence: an online dot for humans and agents in a channel's member list, the DM list and the
// owner's people page, turning green and grey live as their sockets open and close (no reload).
// Mentions: the badge is the server's count (the person's inbox), so a mention that arrived
// before the page opened is counted, a new one adds live, and reading the conversation clears it
// on the server: after a reload, and on another device, it stays cleared.
import t from 'tap'
import type { Page } from 'playwright-core'
import { bearer, createChannel, disableLoopGuard, seedWorkspace, untilPlanned } from '../support/index.ts'
import { connect } from '../realtime/helpers.ts'
import { browserSkip, checkAccessibility, launch, openPage, screenshot, signedInContext, startServer } from './browser.ts'

const skip = browserSkip()
const json = { 'content-type': 'application/json' }

/** The dot of this member inside `scope`: 'true' online, 'false' offline. */
const dotOf = (page: Page, scope: string, memberId: string) => page.locator(`${scope} [data-testid="online-dot"][data-member="${memberId}"]`)
async function waitOnline(page: Page, scope: string, memberId: string, online: boolean): Promise<void> {
  await page.locator(`${scope} [data-testid="online-dot"][data-member="${memberId}"][data-online="${online}"]`).first().waitFor()
}

t.test('presence dots and the mentions badge', { skip }, async (t) => {
  const { api, app, base } = await startServer(t)
  const ws = await seedWorkspace(app)
  await disableLoopGuard(app)
  const general = await createChannel(api, ws.owner.token, 'general', { description: null, members: [ws.member.id, ws.primary.id] })
  const quiet = await createChannel(api, ws.owner.token, 'quiet', { description: null, members: [ws.member.id] })
  t.equal((await api({ method: 'POST', url: '/api/v1/dm', headers: { ...bearer(ws.member.token), ...json }, payload: { participant_id: ws.owner.id } })).statusCode, 201)
  const post = async (channelId: string, key: string, text: string) => {
    const res = await api({ method: 'POST', url: `/api/v1/channels/${channelId}/messages`, headers: { ...bearer(key), ...json }, payload: { text } })
    t.equal(res.statusCode, 201)
    return res.json()
  }
  const mentionsOnServer = async () => (await api({ method: 'GET', url: '/api/v1/inbox?limit=1', headers: bearer(ws.member.token) })).json().counts.by_kind.mention
  const wsBase = base.replace('http:', 'ws:')
  const browser = await launch(t)

  await t.test('online dots for people and agents, live, in the member list, the DM list and the people page (desktop)', async (t) => {
    const member = await openPage(t, browser)
    await signedInContext(member.page, ws.member, 'member')
    await member.page.goto(`${base}/c/${general.id}`)
    const sidebar = 'nav[aria-label="Conversations"]'
    // The owner is a human with no socket: offline in the DM list.
    await waitOnline(member.page, sidebar, ws.owner.id, false)
    await member.page.getByRole('button', { name: '3 members' }).click()
    const dialog = '.members-dialog'
    await waitOnline(member.page, dialog, ws.owner.id, false)
    await waitOnline(member.page, dialog, ws.primary.id, false)
    await waitOnline(member.page, dialog, ws.member.id, true)

    // The owner opens the web UI and the primary agent its socket: both turn green, live.
    const owner = await openPage(t, browser)
    await signedInContext(owner.page, ws.owner, 'admin', true)
    await owner.page.goto(`${base}/settings/people`)
    const agent = await connect(wsBase, ws.primary.key)
    await waitOnline(member.page, dialog, ws.owner.id, true)
    await waitOnline(member.page, dialog, ws.primary.id, true)
    await waitOnline(member.page, sidebar, ws.owner.id, true)
    t.equal(await dotOf(member.page, sidebar, ws.owner.id).getAttribute('aria-label'), 'online', 'said in words too')
    await checkAccessibility(t, member.page, 'member list with presence')
    await screenshot(member.page, 'presence-members-desktop')

    // The owner's people page shows who is online: the member is.
    const people = 'section[aria-labelledby="people-title"]'
    await waitOnline(owner.page, people, ws.member.id, true)
    await waitOnline(owner.page, people, ws.owner.id, true)
    await owner.page.locator(people).scrollIntoViewIfNeeded()
    await screenshot(owner.page, 'presence-people-desktop')

    // Sockets closing turn the dots grey again, without a reload.
    await agent.client.close()
    await owner.context.close()
    await waitOnline(member.page, dialog, ws.primary.id, false)
    await waitOnline(member.page, dialog, ws.owner.id, false)
    await waitOnline(member.page, sidebar, ws.owner.id, false)
    t.same(member.problems, [])
  })

  await t.test('the mentions badge is the server count, live, cleared by reading (360 px)', async (t) => {
    // A mention from before the page opened: only the server knows it.
    await post(general.id, ws.primary.key, '@member the build is red')
    await untilPlanned(app)
    t.equal(await mentionsOnServer(), 1)

    const { page, problems } = await openPage(t, browser, { width: 360, height: 740 })
    await signedInContext(page, ws.member, 'member')
    await page.goto(`${base}/c/${quiet.id}`)
    await page.getByText('No messages yet. Say hello!').waitFor()
    await page.getByTestId('menu-unread').waitFor()
    await page.waitForFunction(() => / · 1 @\) Agent Messaging$/.test((globalThis as unknown as { document: { title: string } }).document.title))
    await page.getByRole('button', { name: /^Conversations/ }).click()
    const badge = page.getByTestId('mentions-badge')
    t.equal(await badge.textContent(), '1 new', 'counted from the server')

    // A new mention, in another conversation, adds one live.
    await post(general.id, ws.primary.key, '@member and the deploy too')
    await page.waitForFunction(
      () => (globalThis as unknown as { document: { querySelector: (s: string) => { textContent: string } | null } }).document.querySelector('[data-testid="mentions-badge"]')?.textContent === '2 new',
    )
    await screenshot(page, 'mentions-badge-360')
    await checkAccessibility(t, page, 'sidebar with the mentions badge')

    // The Mentions view lists them; opening the conversation reads it and clears the badge.
    await page.getByRole('link', { name: /Mentions/ }).click()
    await page.getByText('the build is red').waitFor()
    await page.getByRole('button', { name: /^Conversations/ }).click()
    t.equal(await badge.textContent(), '2 new', 'listing mentions does not read them')
    await page
      .getByRole('navigation', { name: 'Conversations' })
      .getByRole('link', { name: /general/ })
      .click()
    await page.getByTestId('message').filter({ hasText: 'and the deploy too' }).waitFor()
    await page.waitForFunction(() => / @\)/.test((globalThis as unknown as { document: { title: string } }).document.title) === false)
    for (let i = 0; i < 50 && (await mentionsOnServer()) !== 0; i++) await new Promise((r) => setTimeout(r, 100))
    t.equal(await mentionsOnServer(), 0, 'acknowledged on the server by reading (the early mention too)')

    // A reload (or another device) asks the server: nothing left.
    await page.reload()
    await page.getByTestId('message').filter({ hasText: 'and the deploy too' }).waitFor()
    await page.getByRole('button', { name: /^Conversations/ }).click()
    await page.getByRole('link', { name: /Mentions/ }).waitFor()
    t.equal(await badge.count(), 0, 'no badge after a reload')
    const other = await openPage(t, browser)
    await signedInContext(other.page, ws.member, 'member')
    await other.page.goto(`${base}/c/${quiet.id}`)
    await other.page.getByRole('link', { name: /Mentions/ }).waitFor()
    await other.page
      .getByRole('navigation', { name: 'Conversations' })
      .getByRole('link', { name: /general/ })
      .waitFor()
    t.equal(await other.page.getByTestId('mentions-badge').count(), 0, 'none on another device')
    t.same(problems, [])
    t.same(other.problems, [])
  })
})
