// Mentions in a real browser: `@name` in a message is marked, a mention of the signed-in person
// stands out more, a name that did not resolve stays plain; the Mentions view (from the sidebar)
// lists the messages that mention me, newest first, updates live, and opens the message in its
// conversation; wide, narrow and dark screens pass axe.
import t from 'tap'
import { bearer, seedWorkspace } from '../support/index.ts'
import { browserSkip, checkAccessibility, launch, openPage, screenshot, signedInContext, startServer } from './browser.ts'

const skip = browserSkip()
const json = { 'content-type': 'application/json' }

t.test('mentions', { skip }, async (t) => {
  const { app, api, base } = await startServer(t)
  const ws = await seedWorkspace(app)
  const createChannel = async (name: string, members: string[]) => {
    const res = await api({ method: 'POST', url: '/api/v1/channels', headers: { ...bearer(ws.owner.token), ...json }, payload: { name, topic: `${name} talk` } })
    t.equal(res.statusCode, 201)
    for (const id of members) {
      const add = await api({ method: 'POST', url: `/api/v1/channels/${res.json().id}/members`, headers: { ...bearer(ws.owner.token), ...json }, payload: { user_id: id } })
      t.equal(add.statusCode, 201)
    }
    return res.json<{ id: string; name: string }>()
  }
  const general = await createChannel('general', [ws.member.id, ws.primary.id, ws.agents[0]!.id])
  const ops = await createChannel('ops', [ws.member.id, ws.primary.id])
  const post = async (channelId: string, key: string, text: string) => {
    const res = await api({ method: 'POST', url: `/api/v1/channels/${channelId}/messages`, headers: { ...bearer(key), ...json }, payload: { text } })
    t.equal(res.statusCode, 201)
    return res.json<{ id: string; mentions: string[] }>()
  }
  await post(general.id, ws.owner.token, 'Morning all, nothing for anyone in particular.')
  const forAgent = await post(general.id, ws.owner.token, '@agent-1 could you summarise yesterday?')
  const forMe = await post(general.id, ws.primary.key, '@member the deploy finished; @agent-1 has the log.')
  const notHere = await post(general.id, ws.owner.token, 'Ping @agent-2 (not in this channel) about it.')
  t.same(notHere.mentions, [], 'a non-member does not resolve')
  const inOps = await post(ops.id, ws.primary.key, 'Heads up @member: disk at 80 % on the build box.')
  const browser = await launch(t)

  await t.test('mentions are marked in the conversation; mine stand out', async (t) => {
    const { page, problems } = await openPage(t, browser)
    await signedInContext(page, ws.member, 'member')
    await page.goto(`${base}/c/${general.id}`)
    const mine = page.getByTestId('message').filter({ hasText: 'the deploy finished' })
    await mine.getByTestId('mention-me').waitFor()
    t.equal(await mine.getByTestId('mention-me').textContent(), '@member')
    t.equal(await mine.getByTestId('mention').textContent(), '@agent-1', "someone else's mention is marked, less strongly")
    t.equal(await mine.locator('.message-text').textContent(), '@member the deploy finished; @agent-1 has the log.', 'the text reads the same')
    const other = page.getByTestId('message').filter({ hasText: 'not in this channel' })
    t.equal(await other.locator('.mention').count(), 0, 'a name that did not resolve stays plain')
    t.equal(await page.getByTestId('message').filter({ hasText: 'could you summarise' }).getByTestId('mention').textContent(), '@agent-1')
    await checkAccessibility(t, page, 'conversation with mentions')
    await screenshot(page, 'mentions-channel')
    t.same(problems, [])
  })

  await t.test("the composer completes @names of the conversation's members", async (t) => {
    const { page, problems } = await openPage(t, browser)
    await signedInContext(page, ws.member, 'member')
    await page.goto(`${base}/c/${general.id}`)
    const box = page.getByLabel('Message general')
    await box.pressSequentially('thanks @ag')
    const list = page.getByRole('listbox', { name: 'People to mention' })
    await list.waitFor()
    t.same(await list.getByRole('option').allTextContents(), ['@agent-1agent-1 · agent'], 'members only: agent-2 is not in this channel')
    await checkAccessibility(t, page, 'mention suggestions')
    await screenshot(page, 'mentions-autocomplete')
    await box.press('Enter')
    t.equal(await box.inputValue(), 'thanks @agent-1 ', 'Enter inserts the handle; it does not send')
    await box.pressSequentially('and @p')
    await list.waitFor()
    await box.press('Escape')
    await list.waitFor({ state: 'detached' })
    await box.pressSequentially('rimary-agent!')
    await box.press('Enter')
    const sent = page.getByTestId('message').filter({ hasText: 'thanks @agent-1 and @primary-agent!' })
    await sent.waitFor()
    t.same(await sent.getByTestId('mention').allTextContents(), ['@agent-1', '@primary-agent'], 'both resolved')
    t.same(problems, [])
  })

  await t.test('the Mentions view: from the sidebar, newest first, live, opens the message', async (t) => {
    const { page, problems } = await openPage(t, browser)
    await signedInContext(page, ws.member, 'member')
    await page.goto(`${base}/c/${general.id}`)
    await page.getByRole('navigation', { name: 'Conversations' }).getByRole('link', { name: 'Mentions' }).click()
    await page.getByRole('heading', { name: 'Mentions' }).waitFor()
    t.match(page.url(), /\/mentions$/)
    const hits = page.getByTestId('mention-hit')
    await hits.nth(1).waitFor()
    t.equal(await hits.count(), 2)
    t.match(await hits.nth(0).textContent(), /#ops.*primary-agent.*disk at 80 %/s, 'newest first, with its conversation and author')
    t.match(await hits.nth(1).textContent(), /#general.*the deploy finished/s)
    t.equal(await page.getByRole('status').textContent(), '2 messages mention you')
    t.equal(await hits.nth(0).getByTestId('mention-me').textContent(), '@member')
    await checkAccessibility(t, page, 'mentions view')
    await screenshot(page, 'mentions-desktop')

    // A new mention arrives while the view is open.
    const live = await post(general.id, ws.agents[0]!.key, 'Summary is ready, @member.')
    await hits.filter({ hasText: 'Summary is ready' }).waitFor()
    t.match(await hits.nth(0).textContent(), /Summary is ready/)
    t.same(live.mentions, [ws.member.id])

    await hits.filter({ hasText: 'the deploy finished' }).click()
    await page.getByRole('heading', { name: 'general' }).waitFor()
    t.match(page.url(), new RegExp(`/c/${general.id}\\?message=${forMe.id}`))
    await page.locator('[data-highlighted="true"]').filter({ hasText: 'the deploy finished' }).waitFor()
    t.same(problems, [])
  })

  await t.test('empty, narrow and dark', async (t) => {
    const owner = await openPage(t, browser)
    await signedInContext(owner.page, ws.owner, 'admin', true)
    await owner.page.goto(`${base}/mentions`)
    await owner.page.getByRole('heading', { name: 'Mentions' }).waitFor()
    await owner.page
      .getByRole('status')
      .filter({ hasText: /mention/ })
      .waitFor()
    await screenshot(owner.page, 'mentions-empty')
    await owner.page.getByText('No one has mentioned you yet.').waitFor()
    t.match(await owner.page.locator('.empty-conversation').textContent(), /@owner/, 'the empty state says how one is mentioned')
    await checkAccessibility(t, owner.page, 'mentions, empty')

    const phone = await openPage(t, browser, { width: 360, height: 740 })
    await signedInContext(phone.page, ws.member, 'member')
    await phone.page.goto(`${base}/c/${general.id}`)
    await phone.page.getByTestId('mention-me').first().waitFor()
    await screenshot(phone.page, 'mentions-channel-360')
    await phone.page.getByRole('button', { name: 'Conversations' }).click()
    await phone.page.getByRole('link', { name: 'Mentions' }).click()
    await phone.page.getByTestId('mention-hit').first().waitFor()
    // The drawer slides away (visibility turns hidden at the end of its transition).
    await phone.page.locator('.sidebar').waitFor({ state: 'hidden' })
    await screenshot(phone.page, 'mentions-360')
    const width = await phone.page.evaluate(() => (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement.scrollWidth)
    t.ok(width <= 360, `nothing overflows sideways at 360 px (${width})`)
    await checkAccessibility(t, phone.page, 'mentions at 360 px')

    const dark = await openPage(t, browser, { scheme: 'dark' })
    await signedInContext(dark.page, ws.member, 'member')
    await dark.page.goto(`${base}/c/${general.id}`)
    await dark.page.getByTestId('mention-me').first().waitFor()
    await checkAccessibility(t, dark.page, 'mentions, dark')
    await screenshot(dark.page, 'mentions-dark')
    t.same(owner.problems, [])
    t.same(phone.problems, [])
    t.same(dark.problems, [])
    t.ok(forAgent.mentions.length === 1 && inOps.mentions.length === 1)
  })
})
