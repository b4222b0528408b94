// Getting around, in a real browser: drafts kept per conversation across switching and reload,
// the Ctrl+K switcher (conversations and people; a button on a phone), the skip link and the
// <main> landmark, the focus in the thread's composer when a thread opens, a deep link's
// `?thread=` kept through the login page, and an account awaiting approval told so instead of
// "Connection lost".
import t from 'tap'
import { bearer, createChannel, FIXTURE_PASSWORD, seedWorkspace } from '../support/index.ts'
import { browserSkip, checkAccessibility, launch, openPage, screenshot, signedInContext, signInAs, startServer } from './browser.ts'

const skip = browserSkip()
const json = { 'content-type': 'application/json' }

type Doc = { document: { activeElement: { id: string; textContent: string | null; tagName: string } | null } }
const activeElement = (page: import('playwright-core').Page) =>
  page.evaluate(() => {
    const el = (globalThis as unknown as Doc).document.activeElement
    return el ? { id: el.id, text: el.textContent ?? '', tag: el.tagName } : null
  })

t.test('getting around', { skip }, async (t) => {
  const { api, app, base } = await startServer(t)
  const ws = await seedWorkspace(app)
  const general = await createChannel(api, ws.owner.token, 'general', { description: null, members: [ws.member.id, ws.primary.id] })
  const other = await createChannel(api, ws.owner.token, 'other', { description: null, members: [ws.member.id] })
  const root = await api({ method: 'POST', url: `/api/v1/channels/${general.id}/messages`, headers: { ...bearer(ws.primary.key), ...json }, payload: { text: 'Start of a thread' } })
  t.equal(root.statusCode, 201)
  const rootId = root.json().id as string
  const browser = await launch(t)

  await t.test('drafts, the switcher, the skip link and the thread composer (desktop)', async (t) => {
    const { page, problems } = await openPage(t, browser)
    await signedInContext(page, ws.member, 'member')
    await page.goto(`${base}/c/${general.id}`)
    await page.getByTestId('message').filter({ hasText: 'Start of a thread' }).waitFor()

    // The skip link comes first and leads into <main>.
    t.equal(await page.getByRole('main').count(), 1, 'one main landmark')
    await page.keyboard.press('Tab')
    t.match(await activeElement(page), { text: 'Skip to the conversation' })
    await page.keyboard.press('Enter')
    t.match(await activeElement(page), { id: 'main-content', tag: 'MAIN' })

    // A draft stays with its conversation, across switching and a reload.
    await page.getByLabel('Message general').fill('half a thought')
    await page.getByRole('link', { name: /other/ }).click()
    await page.getByRole('heading', { name: 'other' }).waitFor()
    t.equal(await page.getByLabel('Message other').inputValue(), '', 'another conversation has its own box')
    await page.getByLabel('Message other').fill('something else')
    await page.getByRole('link', { name: /general/ }).click()
    t.equal(await page.getByLabel('Message general').inputValue(), 'half a thought')
    await page.reload()
    t.equal(await page.getByLabel('Message general').inputValue(), 'half a thought', 'kept across a reload')
    await page.getByLabel('Message general').press('Enter')
    await page.getByTestId('message').filter({ hasText: 'half a thought' }).waitFor()
    await page.reload()
    await page.getByTestId('message').filter({ hasText: 'half a thought' }).waitFor()
    t.equal(await page.getByLabel('Message general').inputValue(), '', 'a sent draft is gone')

    // Ctrl+K: filter, Enter opens; a person opens the DM with them.
    await page.keyboard.press('Control+k')
    const input = page.getByRole('combobox', { name: 'Conversation or person' })
    await input.waitFor()
    t.match(await activeElement(page), { id: 'switcher-input' }, 'the switcher takes the focus')
    await input.fill('oth')
    t.same(await page.getByRole('option').allTextContents(), ['#otherChannel'])
    await checkAccessibility(t, page, 'switcher')
    await screenshot(page, 'switcher-desktop')
    await input.press('Enter')
    await page.getByRole('heading', { name: 'other' }).waitFor()
    t.match(page.url(), `/c/${other.id}`)
    t.equal(await page.getByLabel('Message other').inputValue(), 'something else', 'its draft is there too')
    await page.keyboard.press('Meta+k')
    await input.fill('agent-2')
    await input.press('Enter')
    await page.getByRole('heading', { name: /agent-2/ }).waitFor()
    await page
      .getByRole('navigation', { name: 'Conversations' })
      .getByRole('link', { name: /agent-2/ })
      .waitFor()

    // Opening a thread puts the focus in its composer: typing goes there.
    await page.getByRole('link', { name: /general/ }).click()
    await page.getByTestId('message').filter({ hasText: 'Start of a thread' }).getByRole('button', { name: 'Reply in thread' }).click()
    await page.getByTestId('thread-panel').waitFor()
    await page.waitForFunction(() => (globalThis as unknown as Doc).document.activeElement?.id === 'thread-composer-text')
    await page.keyboard.type('typed straight away')
    t.equal(await page.getByLabel('Reply in thread').inputValue(), 'typed straight away')
    t.same(problems, [])
  })

  await t.test("a deep link's thread survives the login page (360 px)", async (t) => {
    const { page, problems } = await openPage(t, browser, { width: 360, height: 740 })
    await page.goto(`${base}/c/${general.id}?thread=${rootId}`)
    await page.getByLabel('E-mail').waitFor()
    t.match(decodeURIComponent(page.url()), `next=/c/${general.id}?thread=${rootId}`)
    await page.getByLabel('E-mail').fill(ws.member.email)
    await page.getByLabel('Password').fill(FIXTURE_PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByTestId('thread-panel').waitFor()
    t.match(page.url(), `/c/${general.id}?thread=${rootId}`)

    // The switcher from its button, on a phone.
    await page.getByTestId('thread-panel').getByRole('button', { name: 'Close the thread' }).click()
    await page.getByRole('button', { name: 'Conversations', exact: true }).click()
    await page.getByRole('button', { name: /Jump to/ }).click()
    await page.getByRole('combobox', { name: 'Conversation or person' }).fill('gen')
    await screenshot(page, 'switcher-360')
    await page.getByRole('option', { name: /#general/ }).click()
    await page.getByRole('heading', { name: 'general' }).waitFor()
    t.same(problems, [])
  })

  await t.test('an account awaiting approval is told so, not "Connection lost" (360 px)', async (t) => {
    const registered = await api({
      method: 'POST',
      url: '/api/v1/auth/register',
      headers: json,
      payload: { email: 'newcomer@example.com', password: 'a long enough password', display_name: 'Newcomer' },
    })
    t.equal(registered.statusCode, 201)
    const { page, problems } = await openPage(t, browser, { width: 360, height: 740 })
    const sockets: string[] = []
    page.on('websocket', (socket) => sockets.push(socket.url()))
    await signInAs(page, base, 'newcomer@example.com', 'a long enough password')
    await page.getByTestId('awaiting-approval').waitFor()
    t.match(await page.getByTestId('awaiting-approval').textContent(), 'waiting for the workspace owner to approve it')
    await page.waitForTimeout(1500)
    t.equal(await page.getByTestId('reconnecting').count(), 0, 'no "Connection lost" banner')
    t.same(sockets, [], 'no socket is opened to be refused')
    await checkAccessibility(t, page, 'awaiting approval')
    await screenshot(page, 'awaiting-approval-360')
    // The browser logs the refused list request (403); nothing else.
    t.same(
      problems.filter((p) => !/status of 403/.test(p)),
      [],
    )
  })
})
