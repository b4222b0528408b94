// Owner settings in a real browser, people and workspace part: invite a human with a role (the
// link shown to copy, and it is the real invite), pending invites with a new link on request (the
// old link dies), an expired invite flagged, an e-mail already in use said in words, sign-ups
// approved and refused, everyone with their role; the workspace rate limit and sign-up mode.
import t from 'tap'
import { browserSkip, checkAccessibility, launch, openPage, screenshot, signedInContext, startServer } from './browser.ts'
import { bearer, FIXTURE_PASSWORD, seedWorkspace } from '../support/index.ts'

const skip = browserSkip()

t.test('owner settings: people and workspace', { skip }, async (t) => {
  const { app, api, base, config } = await startServer(t)
  const ws = await seedWorkspace(app)
  const browser = await launch(t)
  const { page, problems } = await openPage(t, browser)
  await signedInContext(page, ws.owner, 'admin', true)
  page.on('dialog', (dialog) => void dialog.accept())
  const tokenOf = (url: string) => new URL(url).searchParams.get('token') ?? ''
  const check = (token: string) => api({ method: 'GET', url: `/api/v1/invite?token=${encodeURIComponent(token)}` })

  await t.test('invite someone with a role, see the pending invite, send a new link', async (t) => {
    await page.goto(`${base}/settings/people`)
    await page.getByText('Nobody is waiting to join.').waitFor()
    await page.getByLabel('E-mail').fill('dana@example.com')
    await page.getByLabel('Name (optional)').fill('Dana')
    await page.getByLabel('Role').selectOption('observer')
    await page.getByRole('button', { name: 'Create invite link' }).click()
    const region = page.getByRole('region', { name: 'invite link' })
    await region.waitFor()
    t.match(await region.textContent(), /Send it to dana@example\.com: it works once, until/)
    const link = (await region.getByTestId('secret').textContent()) ?? ''
    t.ok(link.startsWith(`${config.frontendUrl}/invite?token=inv_`), link)
    const details = await check(tokenOf(link))
    t.equal(details.statusCode, 200)
    t.same({ ...details.json(), expires_at: undefined }, { email: 'dana@example.com', display_name: 'Dana', role: 'observer', expires_at: undefined })

    const pending = page.getByTestId('pending-invite').filter({ hasText: 'dana@example.com' })
    await pending.waitFor()
    t.match(await pending.textContent(), /Dana/)
    t.match(await pending.textContent(), /Observer/)
    t.match(await pending.textContent(), /Link valid until/)
    await checkAccessibility(t, page, 'people')
    await screenshot(page, 'settings-people')

    await region.getByRole('button', { name: 'I have saved it' }).click()
    await pending.getByRole('button', { name: 'New link for dana@example.com' }).click()
    await region.waitFor()
    const fresh = (await region.getByTestId('secret').textContent()) ?? ''
    t.not(fresh, link)
    t.equal((await check(tokenOf(fresh))).json().role, 'observer', 'the new link keeps the role')
    t.equal((await check(tokenOf(link))).json().code, 'INVITE_INVALID', 'the old link no longer works')
    await region.getByRole('button', { name: 'I have saved it' }).click()
    await page.reload()
    await pending.waitFor()
    t.notMatch(await page.locator('body').textContent(), /inv_/, 'links are not shown again')

    // an expired invite is flagged
    await app.db.pool.query("UPDATE invites SET expires_at = now() - interval '1 minute' WHERE consumed_at IS NULL")
    await page.reload()
    await pending.getByText(/^Expired/).waitFor()

    // an e-mail that already has an account: said in words, nothing created
    await page.getByLabel('E-mail').fill(ws.member.email)
    await page.getByRole('button', { name: 'Create invite link' }).click()
    await page.getByRole('alert').filter({ hasText: 'Someone with that e-mail address already has an account in this workspace.' }).waitFor()
    t.same(problems, [])
  })

  await t.test('sign-ups waiting for approval: approve one, refuse another; everyone with roles', async (t) => {
    const register = (email: string) => api({ method: 'POST', url: '/api/v1/auth/register', payload: { email, password: FIXTURE_PASSWORD, display_name: email.split('@')[0] } })
    t.equal((await register('erin@example.com')).statusCode, 201)
    t.equal((await register('frank@example.com')).statusCode, 201)
    await page.reload()
    const erin = page.getByTestId('registration').filter({ hasText: 'erin@example.com' })
    const frank = page.getByTestId('registration').filter({ hasText: 'frank@example.com' })
    await erin.waitFor()
    await erin.getByRole('button', { name: 'Approve erin@example.com' }).click()
    await erin.waitFor({ state: 'detached' })
    await frank.getByRole('button', { name: 'Refuse frank@example.com' }).click()
    await frank.waitFor({ state: 'detached' })
    await page.getByText('Nobody is waiting for approval.').waitFor()
    t.equal(await app.db.prisma.user.count({ where: { email: 'frank@example.com' } }), 0, 'refused: deleted')

    const login = await api({ method: 'POST', url: '/api/v1/auth/login', payload: { email: 'erin@example.com', password: FIXTURE_PASSWORD } })
    t.equal((await api({ method: 'GET', url: '/api/v1/channels', headers: bearer(login.json().token) })).statusCode, 200, 'approved: a member now')

    const everyone = page.getByTestId('person')
    await everyone.filter({ hasText: 'erin@example.com' }).waitFor()
    const rows = await everyone.allTextContents()
    t.same(
      rows.map((r) => r.replace(/\s+/g, ' ')),
      ['erinerin@example.comMember', 'membermember@example.comMember', 'observerobserver@example.comObserver', 'owner (you)owner@example.comOwner'],
    )
    t.same(problems, [])
  })

  await t.test('the workspace rate limit and who can join', async (t) => {
    await page.getByRole('link', { name: 'Workspace', exact: true }).click()
    const effective = page.getByTestId('effective-limit')
    await effective.waitFor()
    t.match(await effective.textContent(), /In force now: no limit\./)
    await page.getByRole('radio', { name: 'A limit of my own' }).check()
    const rate = page.getByLabel('Requests per minute')
    await rate.fill('0')
    t.ok(await page.getByRole('button', { name: 'Save limit' }).isDisabled(), 'an invalid limit cannot be saved')
    await rate.fill('1200')
    await page.getByRole('button', { name: 'Save limit' }).click()
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor()
    t.match(await effective.textContent(), /In force now: 1,200 requests per minute for the whole workspace\./)
    const stored = await api({ method: 'GET', url: '/api/v1/workspace', headers: bearer(ws.owner.token) })
    t.equal(stored.json().rate_limit_per_minute, 1200)
    t.equal(stored.json().effective_rate_limit_per_minute, 1200)

    await page.getByRole('radio', { name: /Invitation only/ }).check()
    await page.getByRole('button', { name: 'Save', exact: true }).click()
    await page.getByRole('status').filter({ hasText: 'Saved.' }).nth(1).waitFor()
    const closed = await api({ method: 'POST', url: '/api/v1/auth/register', payload: { email: 'gail@example.com', password: FIXTURE_PASSWORD, display_name: 'Gail' } })
    t.equal(closed.statusCode, 403)
    t.equal(closed.json().code, 'REGISTRATION_CLOSED')

    await page.reload()
    await effective.waitFor()
    t.ok(await page.getByRole('radio', { name: 'A limit of my own' }).isChecked(), 'the saved choice shows after a reload')
    t.equal(await rate.inputValue(), '1200')
    t.ok(await page.getByRole('radio', { name: /Invitation only/ }).isChecked())
    await checkAccessibility(t, page, 'workspace')
    await screenshot(page, 'settings-workspace')

    await page.getByRole('radio', { name: 'No limit' }).check()
    await page.getByRole('button', { name: 'Save limit' }).click()
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor()
    t.match(await effective.textContent(), /In force now: no limit\./)
    t.equal((await api({ method: 'GET', url: '/api/v1/workspace', headers: bearer(ws.owner.token) })).json().rate_limit_per_minute, 0)
    t.same(problems, [])
  })

  await t.test('people and workspace at 360 px, in the dark', async (t) => {
    const narrow = await openPage(t, browser, { width: 360, height: 780, scheme: 'dark' })
    await signedInContext(narrow.page, ws.owner, 'admin', true)
    await narrow.page.goto(`${base}/settings/people`)
    await narrow.page.getByTestId('person').first().waitFor()
    await checkAccessibility(t, narrow.page, 'people at 360 px, dark')
    await screenshot(narrow.page, 'settings-people-360-dark')
    await narrow.page.goto(`${base}/settings/workspace`)
    await narrow.page.getByTestId('effective-limit').waitFor()
    await checkAccessibility(t, narrow.page, 'workspace at 360 px, dark')
    await screenshot(narrow.page, 'settings-workspace-360-dark')
    t.same(narrow.problems, [])
  })
})
