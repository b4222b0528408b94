// The workspace in a real browser: channels and DMs, messages with day separators and the AGENT
// badge, a message arriving live in a second browser context, edit and delete, the observer's
// read-only composer, the 10 MB refusal before upload, upload and download, narrow and dark
// screens.
import { writeFileSync, readFileSync, mkdtempSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import t from 'tap'
import { browserSkip, checkAccessibility, dropPosts, launch, openPage, POSTS, screenshot, signedInContext, startServer } from './browser.ts'
import { bearer, createChannel, seedWorkspace } from '../support/index.ts'

const skip = browserSkip()
const json = { 'content-type': 'application/json' }

t.test('workspace', { skip }, async (t) => {
  const { app, api, base } = await startServer(t)
  const ws = await seedWorkspace(app)
  const channel = await createChannel(api, ws.owner.token, 'general', { description: null, topic: 'Say hello', members: [ws.member.id, ws.observer.id, ws.primary.id] })
  const post = (key: string, text: string) => api({ method: 'POST', url: `/api/v1/channels/${channel.id}/messages`, headers: { ...bearer(key), ...json }, payload: { text } })
  // Yesterday's history, so a day separator shows, then messages from the agent and the owner.
  const old = await post(ws.primary.key, 'Yesterday the agent said this')
  await app.db.pool.query(`UPDATE messages SET created_at = created_at - interval '1 day' WHERE id = $1`, [old.json().id])
  t.equal((await post(ws.primary.key, 'Hello, I am the primary agent.')).statusCode, 201)
  t.equal((await post(ws.owner.token, 'Welcome everyone!')).statusCode, 201)
  const dm = await api({ method: 'POST', url: '/api/v1/dm', headers: { ...bearer(ws.member.token), ...json }, payload: { participant_id: ws.agents[0]!.id } })
  t.equal(dm.statusCode, 201)
  const browser = await launch(t)

  await t.test('messages, the AGENT badge, a live message, edit and delete', async (t) => {
    const alice = await openPage(t, browser)
    await signedInContext(alice.page, ws.member, 'member')
    await alice.page.goto(`${base}/`)
    await alice.page.getByRole('heading', { name: 'general' }).waitFor()
    t.match(alice.page.url(), `/c/${channel.id}`, 'the first channel opens')
    const messages = alice.page.getByTestId('message')
    await messages.filter({ hasText: 'Hello, I am the primary agent.' }).waitFor()
    t.equal(await messages.count(), 3)
    t.equal(await alice.page.locator('[data-author-type="AGENT"] .agent-badge').count(), 2, "every agent's message carries the AGENT badge")
    t.equal(await alice.page.locator('[data-author-type="HUMAN"] .agent-badge').count(), 0)
    t.match(await alice.page.locator('.day-separator').first().textContent(), /Yesterday/)
    t.match(await alice.page.locator('.day-separator').last().textContent(), /Today/)
    const sidebar = alice.page.getByRole('navigation', { name: 'Conversations' })
    t.match(await sidebar.textContent(), /agent-1\s*AGENT/, 'the DM with an agent shows the badge')

    // A second person, signed in elsewhere, sees Alice's message arrive without reloading.
    const owner = await openPage(t, browser)
    await signedInContext(owner.page, ws.owner, 'admin', true)
    await owner.page.goto(`${base}/c/${channel.id}`)
    await owner.page.getByTestId('message').filter({ hasText: 'Welcome everyone!' }).waitFor()
    const box = alice.page.getByLabel('Message general')
    await box.fill('First line')
    await box.press('Shift+Enter')
    await box.pressSequentially('second line')
    await box.press('Enter')
    await owner.page.getByTestId('message').filter({ hasText: 'second line' }).waitFor()
    t.match(await owner.page.getByTestId('message').filter({ hasText: 'second line' }).locator('.message-text').textContent(), 'First line\nsecond line', 'Shift+Enter made a new line; Enter sent')
    t.equal(await box.inputValue(), '', 'the composer is empty after sending')

    // An agent posts over the API: it appears live in both, with its badge.
    await post(ws.primary.key, 'Live from the API')
    const live = owner.page.getByTestId('message').filter({ hasText: 'Live from the API' })
    await live.waitFor()
    t.equal(await live.locator('.agent-badge').textContent(), 'AGENT')
    await alice.page.getByTestId('message').filter({ hasText: 'Live from the API' }).waitFor()

    // Alice edits, then deletes her message; the owner sees both changes live.
    const mine = alice.page.getByTestId('message').filter({ hasText: 'second line' })
    await mine.hover()
    await mine.getByRole('button', { name: 'Edit message' }).click()
    const editor = alice.page.getByLabel('Edit message', { exact: true })
    await editor.fill('Edited text')
    await editor.press('Enter')
    await owner.page.getByTestId('message').filter({ hasText: 'Edited text' }).filter({ hasText: '(edited)' }).waitFor()
    alice.page.once('dialog', (dialog) => void dialog.accept())
    await alice.page.getByTestId('message').filter({ hasText: 'Edited text' }).getByRole('button', { name: 'Delete message' }).click()
    await owner.page.getByTestId('message').filter({ hasText: 'Edited text' }).waitFor({ state: 'detached' })
    t.equal(await alice.page.getByTestId('message').filter({ hasText: 'Live from the API' }).getByRole('button', { name: 'Edit message' }).count(), 0, "no edit on someone else's message")

    await checkAccessibility(t, alice.page, 'channel')
    await screenshot(alice.page, 'channel-desktop')
    t.same(alice.problems, [])
    t.same(owner.problems, [])
  })

  await t.test('unread counts rise live and clear when the conversation is opened', async (t) => {
    const { page, problems } = await openPage(t, browser)
    await signedInContext(page, ws.member, 'member')
    await page.goto(`${base}/c/${channel.id}`)
    await page.getByTestId('message').first().waitFor()
    const dmLink = page.getByRole('link', { name: /agent-1/ })
    t.equal(await dmLink.getByTestId('unread').count(), 0)
    for (const text of ['ping 1', 'ping 2']) {
      const res = await api({ method: 'POST', url: `/api/v1/channels/${dm.json().id}/messages`, headers: { ...bearer(ws.agents[0]!.key), ...json }, payload: { text } })
      t.equal(res.statusCode, 201)
    }
    await dmLink
      .getByTestId('unread')
      .filter({ hasText: /^2 unread$/ })
      .waitFor()
    await screenshot(page, 'unread')
    await dmLink.click()
    await page.getByTestId('message').filter({ hasText: 'ping 2' }).waitFor()
    await dmLink.getByTestId('unread').waitFor({ state: 'detached' })
    // the marker is on the server: the API (and any other device) agrees
    await t.resolves(async () => {
      for (let i = 0; i < 50; i++) {
        const list = (await api({ method: 'GET', url: '/api/v1/dm', headers: bearer(ws.member.token) })).json()
        if (list[0].unread_count === 0) return
        await new Promise((r) => setTimeout(r, 100))
      }
      throw new Error('unread count did not clear on the server')
    })
    t.same(problems, [])
  })

  await t.test('create a channel from the sidebar, with a taken name explained', async (t) => {
    const { page, problems } = await openPage(t, browser)
    await signedInContext(page, ws.member, 'member')
    await page.goto(`${base}/c/${channel.id}`)
    await page.getByRole('button', { name: '+ New channel' }).click()
    await page.getByLabel('Channel name').fill('general')
    await page.getByRole('button', { name: 'Create', exact: true }).click()
    await page.getByText('That name is already taken. Choose another one.').waitFor()
    await page.getByLabel('Channel name').fill('random talk')
    await page.getByRole('button', { name: 'Create', exact: true }).click()
    await page.getByRole('heading', { name: 'random talk' }).waitFor()
    await page.getByRole('link', { name: /random talk/ }).waitFor()
    t.match(page.url(), /\/c\/[0-9a-f-]{36}$/)
    t.same(problems, [])
  })

  await t.test('files: the 10 MB refusal before upload, then upload and download', async (t) => {
    const { page, problems } = await openPage(t, browser)
    await signedInContext(page, ws.member, 'member')
    await page.goto(`${base}/c/${channel.id}`)
    await page.getByLabel('Message general').waitFor()
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ams-web-'))
    const big = path.join(dir, 'big.bin')
    writeFileSync(big, Buffer.alloc(10 * 1024 * 1024 + 1))
    await page.getByTestId('file-input').setInputFiles(big)
    await page.getByText('files can be at most 10 MB').waitFor()
    const small = path.join(dir, 'notes.txt')
    writeFileSync(small, 'hello file')
    await page.getByTestId('file-input').setInputFiles(small)
    await page.getByText('notes.txt').waitFor()
    await page.getByLabel('Message general').fill('Here are my notes')
    await page.getByRole('button', { name: 'Send' }).click()
    const message = page.getByTestId('message').filter({ hasText: 'Here are my notes' })
    await message.waitFor()
    const [download] = await Promise.all([page.waitForEvent('download'), message.getByRole('button', { name: 'Download notes.txt' }).click()])
    t.equal(download.suggestedFilename(), 'notes.txt')
    t.equal(readFileSync(await download.path()).toString(), 'hello file')
    t.same(problems, [])
  })

  await t.test('a message the network dropped waits, marked as not sent, and goes out once', async (t) => {
    const { page } = await openPage(t, browser)
    await signedInContext(page, ws.member, 'member')
    await page.goto(`${base}/c/${channel.id}`)
    const box = page.getByLabel('Message general')
    await box.waitFor()
    // the network drops the post: nothing reaches the server
    await dropPosts(page, 'internetdisconnected')
    await box.fill('Lost in transit')
    await box.press('Enter')
    const queued = page.getByTestId('queued-message').filter({ hasText: 'Lost in transit' })
    await queued.getByText('Not sent yet').waitFor()
    t.equal(await box.inputValue(), '', 'the box is free for the next message')
    const stored = await api({ method: 'GET', url: `/api/v1/channels/${channel.id}/messages?limit=50`, headers: bearer(ws.member.token) })
    t.notOk(JSON.stringify(stored.json()).includes('Lost in transit'), 'the server has no such message')
    await page.unroute(POSTS)
    // "Send now", or the retry that comes by itself: either way it goes out exactly once.
    await queued
      .getByRole('button', { name: 'Send now' })
      .click({ timeout: 2000 })
      .catch(() => undefined)
    await page.getByTestId('message').filter({ hasText: 'Lost in transit' }).waitFor()
    await queued.waitFor({ state: 'detached' })
    const after = await api({ method: 'GET', url: `/api/v1/channels/${channel.id}/messages?limit=50`, headers: bearer(ws.member.token) })
    t.equal(after.json().messages.filter((m: { text: string }) => m.text === 'Lost in transit').length, 1, 'stored once')
  })

  await t.test('a message the server refuses comes back to the box, marked, with a retry', async (t) => {
    const { page, problems } = await openPage(t, browser)
    await signedInContext(page, ws.member, 'member')
    await page.goto(`${base}/c/${channel.id}`)
    const box = page.getByLabel('Message general')
    await box.waitFor()
    const tooLong = 'x'.repeat(40_001)
    await box.fill(tooLong)
    await box.press('Enter')
    const notSent = page.getByRole('alert').filter({ hasText: 'Not sent.' })
    await notSent.waitFor()
    t.match(await notSent.textContent(), 'Some of what you entered is not valid', 'the refusal in words')
    t.equal(await box.inputValue(), tooLong, 'the draft is back in the box')
    await box.fill('Short enough')
    await notSent.getByRole('button', { name: 'Retry' }).click()
    await page.getByTestId('message').filter({ hasText: 'Short enough' }).waitFor()
    await notSent.waitFor({ state: 'detached' })
    t.equal(await box.inputValue(), '')
    t.same(problems, [])
  })

  await t.test('an observer reads but cannot post, and is told why', async (t) => {
    const { page, problems } = await openPage(t, browser)
    await signedInContext(page, ws.observer, 'observer')
    await page.goto(`${base}/c/${channel.id}`)
    await page.getByTestId('composer-readonly').waitFor()
    t.match(await page.getByTestId('composer-readonly').textContent(), /observer/)
    t.equal(await page.getByRole('textbox').count(), 0)
    t.same(problems, [])
  })

  await t.test('narrow phone screen and dark theme', async (t) => {
    const phone = await openPage(t, browser, { width: 360, height: 740 })
    await signedInContext(phone.page, ws.member, 'member')
    await phone.page.goto(`${base}/c/${channel.id}`)
    await phone.page.getByTestId('message').first().waitFor()
    await screenshot(phone.page, 'channel-360')
    const width = await phone.page.evaluate(() => (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement.scrollWidth)
    t.ok(width <= 360, `nothing overflows sideways at 360 px (${width})`)
    await phone.page.getByRole('button', { name: 'Conversations' }).click()
    await phone.page.getByRole('link', { name: /agent-1/ }).click()
    await phone.page.getByRole('heading', { name: /agent-1/ }).waitFor()
    await screenshot(phone.page, 'dm-360')
    await checkAccessibility(t, phone.page, 'dm at 360 px')
    const dark = await openPage(t, browser, { scheme: 'dark' })
    await signedInContext(dark.page, ws.member, 'member')
    await dark.page.goto(`${base}/c/${channel.id}`)
    await dark.page.getByTestId('message').first().waitFor()
    await checkAccessibility(t, dark.page, 'channel, dark')
    await screenshot(dark.page, 'channel-dark')
    t.same(phone.problems, [])
    t.same(dark.problems, [])
  })
})
