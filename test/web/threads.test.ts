// Threads in a real browser: "N replies" under a root (replies stay out of the channel's list),
// the thread panel beside the conversation with its replies and a composer that replies in the
// thread, a reply arriving live in a second browser, "Reply in thread" on a message without
// replies, a deleted root kept as a placeholder, and the panel full screen at 360 px.
import t from 'tap'
import { bearer, seedWorkspace } from '../support/index.ts'
import { browserSkip, checkAccessibility, launch, openPage, screenshot, signedInContext, startServer } from './browser.ts'

const skip = browserSkip()
const json = { 'content-type': 'application/json' }

t.test('threads', { skip }, async (t) => {
  const { app, api, base } = await startServer(t)
  const ws = await seedWorkspace(app)
  const created = await api({ method: 'POST', url: '/api/v1/channels', headers: { ...bearer(ws.owner.token), ...json }, payload: { name: 'general', topic: 'Threads' } })
  const channel = created.json()
  for (const id of [ws.member.id, ws.primary.id]) {
    await api({ method: 'POST', url: `/api/v1/channels/${channel.id}/members`, headers: { ...bearer(ws.owner.token), ...json }, payload: { user_id: id } })
  }
  const post = async (key: string, text: string, threadId?: string) => {
    const res = await api({ method: 'POST', url: `/api/v1/channels/${channel.id}/messages`, headers: { ...bearer(key), ...json }, payload: { text, ...(threadId ? { thread_id: threadId } : {}) } })
    t.equal(res.statusCode, 201)
    return res.json()
  }
  const root = await post(ws.owner.token, 'Who can review the release notes?')
  await post(ws.primary.key, 'I can take the first half.', root.id)
  await post(ws.member.token, 'I will do the rest.', root.id)
  const lonely = await post(ws.primary.key, 'Deploy finished without errors.')
  const browser = await launch(t)

  await t.test('the summary, the panel, replying, a live reply, Reply in thread', async (t) => {
    const alice = await openPage(t, browser, { width: 1280, height: 800 })
    await signedInContext(alice.page, ws.member, 'member')
    await alice.page.goto(`${base}/c/${channel.id}`)
    const messages = alice.page.getByTestId('message')
    await messages.filter({ hasText: 'Deploy finished' }).waitFor()
    t.equal(await messages.count(), 2, 'replies are not in the channel list')
    const rootItem = messages.filter({ hasText: 'Who can review' })
    const link = rootItem.getByRole('button', { name: '2 replies: open the thread' })
    t.equal(await link.textContent(), '2 replies')
    t.match(await rootItem.locator('.thread-summary').textContent(), /last reply/)

    await link.click()
    const panel = alice.page.getByTestId('thread-panel')
    await panel.getByTestId('message').filter({ hasText: 'I will do the rest.' }).waitFor()
    t.match(alice.page.url(), `thread=${root.id}`, 'the open thread is in the URL')
    const inPanel = panel.getByTestId('message')
    t.same(
      await inPanel.locator('.message-text').allTextContents(),
      ['Who can review the release notes?', 'I can take the first half.', 'I will do the rest.'],
      'the root, then its replies oldest first',
    )
    t.equal(await panel.getByRole('button', { name: /Reply in thread|open the thread/ }).count(), 0, 'no thread inside the thread')
    t.equal(await alice.page.getByRole('heading', { name: 'general', exact: true }).count(), 1, 'the channel stays beside the panel')

    // A second person has the same thread open; Alice replies, it arrives live there.
    const owner = await openPage(t, browser)
    await signedInContext(owner.page, ws.owner, 'admin', true)
    await owner.page.goto(`${base}/c/${channel.id}?thread=${root.id}`)
    const ownerPanel = owner.page.getByTestId('thread-panel')
    await ownerPanel.getByTestId('message').filter({ hasText: 'I will do the rest.' }).waitFor()
    const box = panel.getByLabel('Reply in thread')
    await box.fill('Done with my part')
    await box.press('Enter')
    await ownerPanel.getByTestId('message').filter({ hasText: 'Done with my part' }).waitFor()
    await panel.getByTestId('message').filter({ hasText: 'Done with my part' }).waitFor()
    t.equal(await box.inputValue(), '', 'the thread composer is empty after sending')
    await owner.page.getByTestId('message').filter({ hasText: 'Who can review' }).getByRole('button', { name: '3 replies: open the thread' }).waitFor()
    await rootItem.getByRole('button', { name: '3 replies: open the thread' }).waitFor()
    t.equal(await owner.page.locator('.message-scroller [data-testid="message"]').count(), 2, 'the live reply did not join the channel list')
    const stored = (await api({ method: 'GET', url: `/api/v1/channels/${channel.id}/messages/${root.id}`, headers: bearer(ws.member.token) })).json()
    t.equal(stored.reply_count, 3)

    // An agent replies over the API: live in the open panel.
    await post(ws.primary.key, 'Thanks both!', root.id)
    await panel.getByTestId('message').filter({ hasText: 'Thanks both!' }).waitFor()

    await checkAccessibility(t, alice.page, 'thread panel')
    await screenshot(alice.page, 'thread-1280')

    // "Reply in thread" on a message without replies opens an empty thread to start.
    await alice.page.getByRole('button', { name: 'Close the thread' }).click()
    await panel.waitFor({ state: 'detached' })
    const lonelyItem = messages.filter({ hasText: 'Deploy finished' })
    await lonelyItem.getByRole('button', { name: 'Reply in thread' }).click()
    await panel.getByText('No replies yet').waitFor()
    await panel.getByLabel('Reply in thread').fill('Great, thanks')
    await panel.getByRole('button', { name: 'Reply', exact: true }).click()
    await panel.getByTestId('message').filter({ hasText: 'Great, thanks' }).waitFor()
    await lonelyItem.getByRole('button', { name: '1 reply: open the thread' }).waitFor()
    await alice.page.keyboard.press('Escape')
    await panel.waitFor({ state: 'detached' })
    t.same(alice.problems, [])
    t.same(owner.problems, [])
  })

  await t.test('a deleted root with replies stays as a placeholder', async (t) => {
    const { page, problems } = await openPage(t, browser)
    await signedInContext(page, ws.member, 'member')
    await page.goto(`${base}/c/${channel.id}`)
    const item = page.getByTestId('message').filter({ hasText: 'Deploy finished' })
    await item.waitFor()
    const del = await api({ method: 'DELETE', url: `/api/v1/channels/${channel.id}/messages/${lonely.id}`, headers: bearer(ws.primary.key) })
    t.equal(del.statusCode, 204)
    const placeholder = page.getByTestId('message').filter({ hasText: 'This message was deleted.' })
    await placeholder.waitFor()
    t.equal(await page.getByTestId('message').filter({ hasText: 'Deploy finished' }).count(), 0, 'its text is gone')
    await placeholder.getByRole('button', { name: '1 reply: open the thread' }).click()
    await page.getByTestId('thread-panel').getByTestId('message').filter({ hasText: 'Great, thanks' }).waitFor()
    t.same(problems, [])
  })

  await t.test('at 360 px the thread takes the whole screen', async (t) => {
    const phone = await openPage(t, browser, { width: 360, height: 740 })
    await signedInContext(phone.page, ws.member, 'member')
    await phone.page.goto(`${base}/c/${channel.id}`)
    await phone.page
      .getByTestId('message')
      .filter({ hasText: 'Who can review' })
      .getByRole('button', { name: /replies: open the thread/ })
      .click()
    const panel = phone.page.getByTestId('thread-panel')
    await panel.getByTestId('message').filter({ hasText: 'Thanks both!' }).waitFor()
    const box = await panel.boundingBox()
    t.same(box && { x: box.x, y: box.y, width: box.width, height: box.height }, { x: 0, y: 0, width: 360, height: 740 }, 'full screen')
    const width = await phone.page.evaluate(() => (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement.scrollWidth)
    t.ok(width <= 360, `nothing overflows sideways at 360 px (${width})`)
    await checkAccessibility(t, phone.page, 'thread at 360 px')
    await screenshot(phone.page, 'thread-360')
    await phone.page.getByRole('button', { name: 'Close the thread' }).click()
    await panel.waitFor({ state: 'detached' })
    t.same(phone.problems, [])
  })
})
