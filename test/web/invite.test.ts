// Invite and sign-in in a real browser: a token holding `+` and `/` (both URL forms), expired,
// used and unknown invites, the login page, sign-out, a session kept across reloads and ended by
// a 401.
import t from 'tap'
import { browserSkip, checkAccessibility, launch, openPage, screenshot, signInAs, startServer } from './browser.ts'
import { bearer, FIXTURE_PASSWORD, seedWorkspace } from '../support/index.ts'

const skip = browserSkip()

t.test('invite and sign-in', { skip }, async (t) => {
  const server = await startServer(t)
  const { app, api, base } = server
  const ws = await seedWorkspace(app)
  const browser = await launch(t)

  // An invite whose token holds both `+` and `/` (base64); keep asking until one does.
  let invite: { invite_token: string; invite_url: string } | undefined
  for (let i = 0; i < 40 && !invite; i++) {
    const res = await api({
      method: 'POST',
      url: '/api/v1/invites',
      headers: { ...bearer(ws.owner.token), 'content-type': 'application/json' },
      payload: { email: `new${i}@example.com`, display_name: 'Nina New', role: 'member' },
    })
    t.equal(res.statusCode, 201)
    const body = res.json()
    if (body.invite_token.includes('+') && body.invite_token.includes('/')) invite = body
  }
  if (!invite) throw new Error('no invite token with + and / in 40 tries')
  const link = new URL(invite.invite_url)
  t.equal(link.pathname, '/invite')
  t.notMatch(link.search, /[+/]/, 'the API percent-encodes the token in the invite URL')

  await t.test('the raw form (a `+` that a parser reads as a space) shows the same invite', async (t) => {
    const { page, problems } = await openPage(t, browser)
    await page.goto(`${base}/invite?token=${invite.invite_token}`)
    await page.getByRole('heading', { name: "You're invited" }).waitFor()
    t.match(await page.getByTestId('invite-email').textContent(), /^new\d+@example\.com$/)
    t.same(problems, [])
  })

  await t.test('accepting the invite from the API-built URL signs the person in', async (t) => {
    const { page, problems } = await openPage(t, browser)
    await page.goto(`${base}${link.pathname}${link.search}`)
    await page.getByRole('heading', { name: "You're invited" }).waitFor()
    t.match(await page.getByTestId('invite-email').textContent(), /^new\d+@example\.com$/)
    t.equal(await page.getByTestId('invite-role').textContent(), 'Member')
    const submit = page.getByRole('button', { name: 'Set password and join' })
    await page.getByLabel('Password').fill('short')
    t.match(await page.locator('#password-rule').textContent(), /At least 12 characters \(7 more\)/, 'the rule is shown while typing')
    t.ok(await submit.isDisabled(), 'a short password cannot be sent')
    await checkAccessibility(t, page, 'invite')
    await screenshot(page, 'invite')
    await page.getByLabel('Password').fill('a long enough password')
    t.match(await page.locator('#password-rule').textContent(), /✓/)
    await submit.click()
    await page.getByRole('navigation', { name: 'Conversations' }).waitFor()
    t.match(await page.locator('.me').textContent(), 'Nina New', 'signed in as the invited person')
    // the session survives a reload
    await page.reload()
    await page.getByRole('navigation', { name: 'Conversations' }).waitFor()
    t.same(problems, [])

    await t.test('the used invite then says so', async (t) => {
      const { page, problems } = await openPage(t, browser)
      await page.goto(`${base}${link.pathname}${link.search}`)
      await page.getByRole('heading', { name: 'This invite has already been used' }).waitFor()
      await checkAccessibility(t, page, 'invite used')
      await screenshot(page, 'invite-used')
      t.same(problems, [])
    })
  })

  await t.test('an expired invite and an unknown one each get their page', async (t) => {
    const res = await api({ method: 'POST', url: '/api/v1/invites', headers: { ...bearer(ws.owner.token), 'content-type': 'application/json' }, payload: { email: 'late@example.com' } })
    const late = res.json()
    await app.db.prisma.invite.updateMany({ where: { user: { email: 'late@example.com' } }, data: { expiresAt: new Date(Date.now() - 1000) } })
    const { page, problems } = await openPage(t, browser)
    await page.goto(`${base}/invite${new URL(late.invite_url).search}`)
    await page.getByRole('heading', { name: 'This invite has expired' }).waitFor()
    t.match(await page.locator('main').textContent(), /Ask the workspace owner to send you a new one/)
    await screenshot(page, 'invite-expired')
    await page.goto(`${base}/invite?token=${encodeURIComponent('inv_' + Buffer.alloc(32).toString('base64'))}`)
    await page.getByRole('heading', { name: 'This invite link is not valid' }).waitFor()
    await page.goto(`${base}/invite`)
    await page.getByRole('heading', { name: 'This invite link is not valid' }).waitFor()
    t.same(problems, [])
  })

  await t.test('login, wrong password, sign-out, and back to login when the JWT is refused', async (t) => {
    const { page, problems } = await openPage(t, browser)
    await page.goto(`${base}/`)
    await page.getByRole('heading', { name: 'Sign in' }).waitFor()
    t.match(page.url(), /\/login$/, 'signed out, the app sends the person to the login page')
    await checkAccessibility(t, page, 'login')
    await screenshot(page, 'login')
    await signInAs(page, base, ws.member.email, 'not the password at all')
    await page.getByText('That e-mail and password do not match an account.').waitFor()
    await signInAs(page, base, ws.member.email, FIXTURE_PASSWORD)
    await page.getByRole('navigation', { name: 'Conversations' }).waitFor()
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.getByRole('heading', { name: 'Sign in' }).waitFor()
    await page.reload()
    await page.getByRole('heading', { name: 'Sign in' }).waitFor()

    // The account is removed while signed in: the next call gets 401 and the login page returns.
    await signInAs(page, base, ws.member.email, FIXTURE_PASSWORD)
    await page.getByRole('navigation', { name: 'Conversations' }).waitFor()
    await app.db.prisma.user.delete({ where: { id: ws.member.id } })
    await page.reload()
    await page.getByRole('heading', { name: 'Sign in' }).waitFor()
    // The notice follows the first refused call; wait for it (the test's timeout fails it if it never comes).
    await page.getByText('Your session has ended').waitFor()
    t.match(await page.locator('main').textContent(), /Your session has ended/)
    // The account went away under an open socket: a reconnection may be tried before the page
    // learns it over REST, and Chromium itself logs the refused handshake. Nothing else may show.
    t.same(
      problems.filter((problem) => !/^error: WebSocket connection to .* failed: HTTP Authentication failed/.test(problem)),
      [],
    )
  })
})
