// The composer in a real browser: upload progress (on a throttled connection, so there is
// progress to see) and cancelling an upload; messages written offline wait, marked as not sent,
// survive a reload, and go out exactly once when the connection is back.
import { mkdtempSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import t, { type Test } from 'tap'
import type { Page } from 'playwright-core'
import { browserSkip, checkAccessibility, dropPosts, launch, openPage, POSTS, screenshot, signedInContext, startServer } from './browser.ts'
import { bearer, createChannel, seedWorkspace } from '../support/index.ts'

const skip = browserSkip()

/** Limits this page's upload speed (bytes per second; -1: no limit) through the DevTools protocol. */
async function throttleUpload(page: Page, bytesPerSecond: number): Promise<void> {
  const cdp = await page.context().newCDPSession(page)
  await cdp.send('Network.enable')
  await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: bytesPerSecond })
}

/** The value of the upload's progress bar, or null when there is none. */
const progressValue = (page: Page) =>
  page.evaluate(() => {
    const bar = (globalThis as unknown as { document: { querySelector: (s: string) => { value: number } | null } }).document.querySelector('[data-testid="upload-progress"] progress')
    return bar ? bar.value : null
  })

t.test('composer', { skip }, async (t) => {
  const { app, api, base } = await startServer(t)
  const ws = await seedWorkspace(app)
  const channel = await createChannel(api, ws.owner.token, 'general', { description: null, members: [ws.member.id] })
  const stored = async (text: string) =>
    (await api({ method: 'GET', url: `/api/v1/channels/${channel.id}/messages?limit=100`, headers: bearer(ws.member.token) })).json().messages.filter((m: { text: string }) => m.text === text)
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ams-web-'))
  const file = path.join(dir, 'report.bin')
  writeFileSync(file, Buffer.alloc(1024 * 1024, 7))
  const browser = await launch(t)
  /** The member's page on #general, its composer ready. */
  const openComposer = async (t: Test, options: { width?: number; height?: number } = {}) => {
    const watched = await openPage(t, browser, options)
    await signedInContext(watched.page, ws.member, 'member')
    await watched.page.goto(`${base}/c/${channel.id}`)
    const box = watched.page.getByLabel('Message general')
    await box.waitFor()
    const send = async (text: string) => {
      await box.fill(text)
      await box.press('Enter')
    }
    return { ...watched, box, send }
  }

  await t.test('a file upload shows its progress, and can be cancelled', async (t) => {
    const { page, problems, box, send } = await openComposer(t)

    // 1 MB at 256 KB/s: about four seconds of upload.
    await throttleUpload(page, 256 * 1024)
    await page.getByTestId('file-input').setInputFiles(file)
    await send('The report, slowly')
    await page.getByRole('progressbar', { name: 'Uploading report.bin' }).waitFor()
    await page.waitForFunction(() => {
      const bar = (globalThis as unknown as { document: { querySelector: (s: string) => { value: number } | null } }).document.querySelector('[data-testid="upload-progress"] progress')
      return bar !== null && bar.value > 0 && bar.value < 100
    })
    const midway = await progressValue(page)
    t.ok(midway !== null && midway > 0 && midway < 100, `part of the file is up (${midway}%)`)
    await checkAccessibility(t, page, 'composer uploading')
    await screenshot(page, 'upload-progress-desktop')
    const message = page.getByTestId('message').filter({ hasText: 'The report, slowly' })
    await message.waitFor({ timeout: 30_000 })
    t.match(await message.textContent(), 'report.bin', 'the file came with it')
    await page.getByTestId('upload-progress').waitFor({ state: 'detached' })
    t.equal((await stored('The report, slowly')).length, 1)

    // Cancelled halfway: nothing is stored, and the file and text are back in the composer.
    await page.getByTestId('file-input').setInputFiles(file)
    await send('Never mind')
    await page.getByRole('button', { name: 'Cancel upload' }).click()
    await page.getByTestId('upload-progress').waitFor({ state: 'detached' })
    t.equal(await box.inputValue(), 'Never mind', 'the text is back')
    await page.getByRole('button', { name: 'Remove report.bin' }).waitFor()
    t.equal(await page.getByRole('alert').filter({ hasText: 'Not sent' }).count(), 0, 'a cancel is not an error')
    t.same(await stored('Never mind'), [], 'nothing stored')
    t.same(problems, [])
  })

  await t.test('offline: text waits, marked as not sent, and goes out once when back online', async (t) => {
    const { context, page, problems, box, send } = await openComposer(t)
    await context.setOffline(true)
    await send('Written on the train')
    const queued = page.getByTestId('queued-message').filter({ hasText: 'Written on the train' })
    await queued.getByText('Not sent yet: you are offline. It will be sent when the connection is back.').waitFor()
    t.equal(await box.inputValue(), '', 'the box is free for the next one')
    await send('And a second thought')
    await page.getByTestId('queued-message').filter({ hasText: 'And a second thought' }).waitFor()
    // A file cannot wait in the browser's storage: it stays in the composer, marked as not sent.
    await page.getByTestId('file-input').setInputFiles(file)
    await send('With a file')
    await page.getByRole('alert').filter({ hasText: 'Not sent.' }).filter({ hasText: 'Cannot reach the server' }).waitFor()
    t.equal(await box.inputValue(), 'With a file')
    await checkAccessibility(t, page, 'composer offline')
    await screenshot(page, 'offline-desktop')
    t.same(await stored('Written on the train'), [], 'nothing reached the server')

    await context.setOffline(false)
    await page.getByTestId('message').filter({ hasText: 'Written on the train' }).waitFor()
    await page.getByTestId('message').filter({ hasText: 'And a second thought' }).waitFor()
    await page.getByTestId('outbox').waitFor({ state: 'detached' })
    t.equal((await stored('Written on the train')).length, 1, 'sent once')
    t.equal((await stored('And a second thought')).length, 1, 'sent once')
    const texts = await page.getByTestId('message').locator('.message-text').allTextContents()
    t.ok(texts.indexOf('Written on the train') < texts.indexOf('And a second thought'), 'in the order written')
    t.same(
      problems.filter((p) => !/Failed to load resource: net::ERR_INTERNET_DISCONNECTED|WebSocket connection to .* failed/.test(p)),
      [],
      'no errors beyond the browser reporting the requests it could not make offline',
    )
  })

  await t.test('360 px: the outbox fits a phone', async (t) => {
    const { context, page, problems, send } = await openComposer(t, { width: 360, height: 740 })
    await context.setOffline(true)
    await send('Sent from a phone in a tunnel')
    await page.getByTestId('queued-message').filter({ hasText: 'Sent from a phone in a tunnel' }).waitFor()
    await checkAccessibility(t, page, 'outbox at 360 px')
    await screenshot(page, 'offline-360')
    const width = await page.evaluate(() => (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement.scrollWidth)
    t.ok(width <= 360, `nothing overflows sideways (${width})`)
    await context.setOffline(false)
    await page.getByTestId('message').filter({ hasText: 'Sent from a phone in a tunnel' }).waitFor()
    t.same(
      problems.filter((p) => !/net::ERR_INTERNET_DISCONNECTED|WebSocket connection to .* failed/.test(p)),
      [],
    )
  })

  await t.test('a message waiting to be sent survives a reload', async (t) => {
    const { page, problems, send } = await openComposer(t)
    // Posts are lost on the way (the rest of the page still loads).
    await dropPosts(page, 'connectionreset')
    await send('Kept across a reload')
    await page.getByTestId('queued-message').filter({ hasText: 'Kept across a reload' }).waitFor()
    await page.reload()
    const queued = page.getByTestId('queued-message').filter({ hasText: 'Kept across a reload' })
    await queued.waitFor()
    t.same(await stored('Kept across a reload'), [])
    await page.unroute(POSTS)
    await queued
      .getByRole('button', { name: 'Send now' })
      .click({ timeout: 2000 })
      .catch(() => undefined)
    await page.getByTestId('message').filter({ hasText: 'Kept across a reload' }).waitFor()
    await queued.waitFor({ state: 'detached' })
    t.equal((await stored('Kept across a reload')).length, 1, 'sent once')
    t.same(
      problems.filter((p) => !/net::ERR_CONNECTION_RESET/.test(p)),
      [],
    )
  })
})
