// People, in a real browser: the profile page (display name and picture; a password change with
// the current password, after which this tab goes on with its new session), the channel browser
// (public channels listed, private ones not; join and land in it), and the sign-up page when the
// workspace lets anyone register (and the sentence when it does not).
import t from 'tap'
import { bearer, createChannel, FIXTURE_PASSWORD, seedWorkspace } from '../support/index.ts'
import { browserSkip, checkAccessibility, launch, openPage, screenshot, signedInContext, startServer } from './browser.ts'

const skip = browserSkip()
const json = { 'content-type': 'application/json' }

t.test('people', { skip }, async (t) => {
  const { api, app, base } = await startServer(t)
  const ws = await seedWorkspace(app)
  const general = await createChannel(api, ws.owner.token, 'general', { description: null, members: [ws.member.id] })
  const browser = await launch(t)

  await t.test('the profile page: name, picture and password (desktop)', async (t) => {
    const { page, problems } = await openPage(t, browser)
    await signedInContext(page, ws.member, 'member')
    // The picture's address is elsewhere on the web: served here by the test.
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNk+A8AAQUBAScY42YAAAAASUVORK5CYII=', 'base64')
    await page.route('https://example.com/**', (route) => route.fulfill({ status: 200, contentType: 'image/png', body: png }))
    await page.goto(`${base}/c/${general.id}`)
    await page.getByRole('link', { name: 'member' }).click()
    await page.getByRole('heading', { name: 'Your profile' }).waitFor()
    await page.getByLabel('Display name').fill('Ada Member')
    await page.getByLabel('Picture address (optional)').fill('ftp://not-a-web-address')
    await page.getByRole('button', { name: 'Save', exact: true }).click()
    await page.getByText('The picture must be a web address').waitFor()
    await page.getByLabel('Picture address (optional)').fill('https://example.com/ada.png')
    await page.getByRole('button', { name: 'Save', exact: true }).click()
    await page.getByText('Saved. Others see the new name and picture now.').waitFor()
    await page.getByRole('link', { name: 'Ada Member' }).waitFor()
    const me = (await api({ method: 'GET', url: '/api/v1/auth/me', headers: bearer(ws.member.token) })).json()
    t.match(me, { display_name: 'Ada Member', avatar_url: 'https://example.com/ada.png' })

    await page.getByLabel('Current password').fill('not my password at all')
    await page.getByLabel('New password').fill('a brand new passphrase')
    await page.getByRole('button', { name: 'Change password' }).click()
    await page.getByText('The current password is not right. Nothing was changed.').waitFor()
    await page.getByLabel('Current password').fill(FIXTURE_PASSWORD)
    await page.getByRole('button', { name: 'Change password' }).click()
    await page.getByText('Password changed. Your other devices must sign in again.').waitFor()
    await checkAccessibility(t, page, 'profile')
    await screenshot(page, 'profile-desktop')
    // This tab goes on with the new session: it still posts.
    await page.getByRole('link', { name: /general/ }).click()
    await page.getByLabel('Message general').fill('Still signed in')
    await page.getByLabel('Message general').press('Enter')
    await page.getByTestId('message').filter({ hasText: 'Still signed in' }).waitFor()
    t.equal((await api({ method: 'GET', url: '/api/v1/auth/me', headers: bearer(ws.member.token) })).statusCode, 401, 'the old session ended')
    const login = await api({ method: 'POST', url: '/api/v1/auth/login', headers: json, payload: { email: ws.member.email, password: 'a brand new passphrase' } })
    t.equal(login.statusCode, 200, 'the new password signs in')
    t.same(problems, [])
  })

  await t.test('the channel browser: public channels, join (360 px)', async (t) => {
    await createChannel(api, ws.owner.token, 'announcements', { description: null, topic: 'News for everyone' })
    const secret = await api({ method: 'POST', url: '/api/v1/channels', headers: { ...bearer(ws.owner.token), ...json }, payload: { name: 'secret plans', private: true } })
    t.equal(secret.statusCode, 201)
    const { page, problems } = await openPage(t, browser, { width: 360, height: 740 })
    await signedInContext(page, ws.observer, 'observer')
    await page.goto(`${base}/`)
    await page.getByRole('button', { name: 'Conversations', exact: true }).click()
    await page.getByRole('link', { name: 'Browse channels' }).click()
    await page.getByRole('heading', { name: 'Browse channels' }).waitFor()
    const items = page.getByTestId('browse-item')
    await items.first().waitFor()
    t.same(
      (await items.allTextContents()).map((text) => text.replace(/(Join|Open).*$/, '')),
      ['#announcementsNews for everyone1 member', '#general2 members'],
      'public channels only, by name',
    )
    await page.getByLabel('Filter by name').fill('ann')
    await items.filter({ hasText: 'general' }).waitFor({ state: 'detached' })
    await checkAccessibility(t, page, 'channel browser')
    await screenshot(page, 'browse-360')
    await page.getByRole('button', { name: 'Join announcements' }).click()
    await page.getByRole('heading', { name: 'announcements' }).waitFor()
    await page.getByTestId('composer-readonly').waitFor()
    t.match(await page.getByTestId('composer-readonly').textContent(), /observer/, 'an observer joins to read')
    await page.getByRole('button', { name: /^Conversations/ }).click()
    await page
      .getByRole('navigation', { name: 'Conversations' })
      .getByRole('link', { name: /announcements/ })
      .waitFor()
    t.same(problems, [])
  })

  await t.test('sign-up when the workspace is open; a sentence when it is closed (360 px)', async (t) => {
    const open = await api({ method: 'PATCH', url: '/api/v1/workspace', headers: { ...bearer(ws.owner.token), ...json }, payload: { registration_mode: 'open' } })
    t.equal(open.statusCode, 200)
    const { page, problems } = await openPage(t, browser, { width: 360, height: 740 })
    await page.goto(`${base}/login`)
    await page.getByRole('link', { name: 'create an account' }).click()
    await page.getByRole('heading', { name: 'Create an account' }).waitFor()
    await page.getByLabel('Your name').fill('Grace Newcomer')
    await page.getByLabel('E-mail').fill('grace@example.com')
    await page.getByLabel('Password').fill('a long enough password')
    await checkAccessibility(t, page, 'sign-up')
    await screenshot(page, 'signup-360')
    await page.getByRole('button', { name: 'Create account' }).click()
    await page.getByRole('button', { name: 'Conversations', exact: true }).waitFor()
    t.notMatch(page.url(), '/signup', 'signed in, in the workspace')

    const closed = await api({ method: 'PATCH', url: '/api/v1/workspace', headers: { ...bearer(ws.owner.token), ...json }, payload: { registration_mode: 'closed' } })
    t.equal(closed.statusCode, 200)
    const other = await openPage(t, browser, { width: 360, height: 740 })
    await other.page.goto(`${base}/login`)
    await other.page.getByText('New here? Open the invite link you were sent to set your password.').waitFor()
    t.equal(await other.page.getByRole('link', { name: 'create an account' }).count(), 0, 'no sign-up link where sign-up is closed')
    await other.page.goto(`${base}/signup`)
    await other.page.getByText('This workspace does not accept sign-ups. Ask its owner for an invitation.').waitFor()
    t.equal(await other.page.getByRole('button', { name: 'Create account' }).count(), 0, 'no form to fill in for nothing')
    t.same(problems, [])
    t.same(other.problems, [])
  })
})
