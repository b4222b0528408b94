// A channel's members and direct messages in a real browser: the member list with AGENT badges
// and roles, adding any agent or human and removing one, refusals in words; starting a DM with
// an agent or a human from a picker and landing in it. Dialogs close with Escape and give the
// focus back to what opened them.
import t from 'tap'
import { browserSkip, checkAccessibility, launch, openPage, screenshot, signedInContext, startServer } from './browser.ts'
import { bearer, createChannel, seedWorkspace } from '../support/index.ts'

const skip = browserSkip()

t.test('members and direct messages', { skip }, async (t) => {
  const { app, api, base } = await startServer(t)
  const ws = await seedWorkspace(app, 3)
  const general = await createChannel(api, ws.owner.token, 'general', { description: null, members: [ws.member.id, ws.primary.id, ws.observer.id] })
  const members = async () =>
    (await api({ method: 'GET', url: `/api/v1/channels/${general.id}/members`, headers: bearer(ws.owner.token) }))
      .json()
      .map((m: { name: string }) => m.name)
      .sort()
  const browser = await launch(t)

  await t.test('a member sees who is in the channel and adds an agent and a person', async (t) => {
    const { page, problems } = await openPage(t, browser)
    await signedInContext(page, ws.member, 'member')
    await page.goto(`${base}/c/${general.id}`)
    const opener = page.getByRole('button', { name: '4 members' })
    await opener.click()
    const dialog = page.getByRole('dialog', { name: 'Members of #general' })
    await dialog.waitFor()
    const rows = dialog.getByTestId('member')
    await rows.first().waitFor()
    t.same(
      await rows.allInnerTexts().then((r) => r.map((x) => x.replace(/\s+/g, ' ').trim())),
      ['owner Owner · created this channel', 'member (you) Member Leave', 'primary-agent AGENT Primary agent', 'observer Observer (read only)'],
      'names, AGENT badge and roles; only leaving for oneself (not the creator, not an admin)',
    )
    await checkAccessibility(t, page, 'members dialog')
    // The picker offers everyone not yet in the channel, agents first.
    const options = dialog.getByTestId('person-option')
    t.same(await options.allInnerTexts().then((r) => r.map((x) => x.replace(/\s+/g, ' ').trim())), ['agent-1 AGENT Agent', 'agent-2 AGENT Agent', 'agent-3 AGENT Agent'])
    await dialog.getByLabel('Add a person or agent').fill('agent-2')
    await dialog.getByLabel('Add a person or agent').press('Enter')
    await dialog.getByRole('status').filter({ hasText: 'agent-2 was added to #general.' }).waitFor()
    await rows.filter({ hasText: 'agent-2' }).waitFor()
    t.same(await members(), ['agent-2', 'member', 'observer', 'owner', 'primary-agent'], 'added on the server')
    await page.getByRole('button', { name: '5 members' }).waitFor()
    await screenshot(page, 'members-desktop')

    // Escape closes the dialog and the focus goes back to the button that opened it.
    await page.keyboard.press('Escape')
    await dialog.waitFor({ state: 'detached' })
    t.equal(
      await page.evaluate(() => (globalThis as unknown as { document: { activeElement: { textContent: string } } }).document.activeElement.textContent),
      '5 members',
      'focus is back on the opener',
    )

    // Someone deleted meanwhile (the owner removes agent-3 while the list still offers it): the
    // refusal is said in words, never as JSON.
    await page.getByRole('button', { name: '5 members' }).click()
    const gone = dialog.getByTestId('person-option').filter({ hasText: 'agent-3' })
    await gone.waitFor()
    t.equal((await api({ method: 'DELETE', url: `/api/v1/agents/${ws.agents[2]!.id}`, headers: bearer(ws.owner.token) })).statusCode, 204)
    await gone.click()
    await dialog.getByRole('alert').filter({ hasText: 'That no longer exists, or you do not have access to it.' }).waitFor()
    t.notMatch(await dialog.textContent(), /NOT_FOUND|\{/, 'no raw error')
    t.same(await members(), ['agent-2', 'member', 'observer', 'owner', 'primary-agent'], 'nothing changed')
    await page.keyboard.press('Escape')
    t.same(problems, [])
  })

  await t.test('the owner (creator, admin) removes a member; the observer can only look', async (t) => {
    const { page, problems } = await openPage(t, browser)
    await signedInContext(page, ws.owner, 'admin', true)
    await page.goto(`${base}/c/${general.id}`)
    await page.getByRole('button', { name: '5 members' }).click()
    const dialog = page.getByRole('dialog', { name: 'Members of #general' })
    await dialog.getByRole('button', { name: 'Remove agent-2 from #general' }).click()
    await dialog.getByRole('status').filter({ hasText: 'agent-2 was removed from #general.' }).waitFor()
    t.same(await members(), ['member', 'observer', 'owner', 'primary-agent'], 'removed on the server')
    t.equal(await dialog.getByTestId('member').filter({ hasText: 'agent-2' }).count(), 0)
    t.same(problems, [])

    const observer = await openPage(t, browser)
    await signedInContext(observer.page, ws.observer, 'observer')
    await observer.page.goto(`${base}/c/${general.id}`)
    await observer.page.getByRole('button', { name: '4 members' }).click()
    const seen = observer.page.getByRole('dialog', { name: 'Members of #general' })
    await seen.getByText('Observers can see the members but not change them.').waitFor()
    t.equal(await seen.getByTestId('person-option').count(), 0, 'no picker')
    t.equal(await seen.getByRole('button', { name: /^Remove/ }).count(), 0, 'no removing')
    t.equal(await observer.page.getByRole('button', { name: '+ New message' }).count(), 0, 'observers cannot start DMs')
    t.same(observer.problems, [])
  })

  await t.test('start a DM with an agent and with a person from the picker, landing in it', async (t) => {
    const { page, problems } = await openPage(t, browser)
    await signedInContext(page, ws.member, 'member')
    await page.goto(`${base}/c/${general.id}`)
    const start = page.getByRole('button', { name: '+ New message' })
    await start.click()
    const dialog = page.getByRole('dialog', { name: 'New direct message' })
    const options = dialog.getByTestId('person-option')
    await options.first().waitFor()
    t.same(
      await options.allInnerTexts().then((r) => r.map((x) => x.replace(/\s+/g, ' ').trim())),
      ['agent-1 AGENT Agent', 'agent-2 AGENT Agent', 'primary-agent AGENT Primary agent', 'observer Observer (read only)', 'owner Owner'],
      'everyone but oneself, agents first',
    )
    t.equal(
      await page.evaluate(() => (globalThis as unknown as { document: { activeElement: { placeholder: string } } }).document.activeElement.placeholder),
      'Type a name',
      'the name box has the focus: type at once',
    )
    await checkAccessibility(t, page, 'new DM dialog')
    await screenshot(page, 'new-dm-desktop')
    // Escape closes it; the focus returns to the button.
    await page.keyboard.press('Escape')
    await dialog.waitFor({ state: 'detached' })
    t.equal(await page.evaluate(() => (globalThis as unknown as { document: { activeElement: { textContent: string } } }).document.activeElement.textContent), '+ New message')

    await start.click()
    await dialog.getByLabel('Send a direct message to').fill('agent 1')
    t.equal(await options.count(), 1, 'the filter narrows the list')
    await options.click()
    await page.getByRole('heading', { name: /agent-1/ }).waitFor()
    const dm = (await api({ method: 'GET', url: '/api/v1/dm', headers: bearer(ws.member.token) })).json()
    t.equal(dm.length, 1)
    t.match(page.url(), `/c/${dm[0].id}`, 'landed in the new DM')
    t.equal(
      await page
        .getByRole('heading', { name: /agent-1/ })
        .locator('.agent-badge')
        .count(),
      1,
      'with the AGENT badge',
    )
    t.equal(await page.evaluate(() => (globalThis as unknown as { document: { activeElement: { id: string } } }).document.activeElement.id), 'composer-text', 'ready to write')
    await page.keyboard.type('Hello agent')
    await page.keyboard.press('Enter')
    await page.getByTestId('message').filter({ hasText: 'Hello agent' }).waitFor()
    await page
      .getByRole('navigation', { name: 'Conversations' })
      .getByRole('link', { name: /agent-1/ })
      .waitFor()

    // With a person, by keyboard only: type, arrow down to the option, Enter.
    await start.click()
    await dialog.getByLabel('Send a direct message to').fill('own')
    await page.keyboard.press('ArrowDown')
    await page.keyboard.press('Enter')
    await page.getByRole('heading', { name: 'owner' }).waitFor()
    // The same person again lands in the same DM, not a new one.
    await start.click()
    await dialog.getByLabel('Send a direct message to').fill('owner')
    await page.keyboard.press('Enter')
    await page.getByRole('heading', { name: 'owner' }).waitFor()
    t.equal((await api({ method: 'GET', url: '/api/v1/dm', headers: bearer(ws.member.token) })).json().length, 2, 'one DM per pair')
    t.same(problems, [])
  })

  await t.test('360 px: the dialogs fit a phone', async (t) => {
    const { page, problems } = await openPage(t, browser, { width: 360, height: 740 })
    await signedInContext(page, ws.member, 'member')
    await page.goto(`${base}/c/${general.id}`)
    await page.getByRole('button', { name: '4 members' }).click()
    await page.getByRole('dialog', { name: 'Members of #general' }).getByTestId('member').first().waitFor()
    await checkAccessibility(t, page, 'members dialog at 360 px')
    await screenshot(page, 'members-360')
    await page.keyboard.press('Escape')
    await page.getByRole('button', { name: 'Conversations' }).click()
    await page.getByRole('button', { name: '+ New message' }).click()
    await page.getByRole('dialog', { name: 'New direct message' }).getByTestId('person-option').first().waitFor()
    await screenshot(page, 'new-dm-360')
    await checkAccessibility(t, page, 'new DM dialog at 360 px')
    t.same(problems, [])
  })
})
