// Owner settings in a real browser, agents part: create an agent and a key (the key seen once),
// edit and delete an agent, the primary agent that cannot be deleted, an error in words; and a
// member or observer never gets the settings, while the API refuses them anyway.
import t from 'tap'
import { browserSkip, checkAccessibility, launch, openPage, screenshot, signedInContext, startServer } from './browser.ts'
import { bearer, seedWorkspace } from '../support/index.ts'

const skip = browserSkip()

t.test('owner settings: agents', { skip }, async (t) => {
  const { app, api, base } = await startServer(t)
  const ws = await seedWorkspace(app)
  const browser = await launch(t)

  await t.test('the owner creates an agent and a key, and sees the key once', async (t) => {
    const { page, problems } = await openPage(t, browser)
    await signedInContext(page, ws.owner, 'admin', true)
    await page.goto(`${base}/`)
    await page.getByRole('link', { name: 'Workspace settings' }).click()
    await page.getByRole('heading', { name: 'Agents', exact: true }).waitFor()
    t.equal(new URL(page.url()).pathname, '/settings/agents')
    t.equal(await page.getByRole('link', { name: 'Agents', exact: true }).getAttribute('aria-current'), 'page')
    await page.getByLabel('Name', { exact: true }).fill('support-bot')
    await page.getByLabel('Display name (optional)').fill('Support Bot')
    await page.getByLabel('Description (optional)').fill('Answers questions')
    await page.getByRole('button', { name: 'Create agent' }).click()
    await page.getByRole('heading', { name: 'API keys of Support Bot' }).waitFor()
    t.match(new URL(page.url()).pathname, /^\/settings\/agents\/[0-9a-f-]{36}$/)
    await page.getByText('No keys yet').waitFor()
    await page.getByLabel('New key name').fill('production')
    await page.getByRole('button', { name: 'Create key' }).click()
    const secret = page.getByTestId('secret')
    await secret.waitFor()
    const key = (await secret.textContent()) ?? ''
    t.match(key, /^svc_[A-Za-z0-9+/]{43}=$/)
    t.match(await page.getByRole('region', { name: 'API key' }).textContent(), /shown only once/)
    t.ok(await page.getByRole('button', { name: 'Copy the API key' }).isVisible(), 'a copy button')
    await checkAccessibility(t, page, 'agent settings')
    await screenshot(page, 'settings-key-once')
    // the key works
    const me = await api({ method: 'GET', url: '/api/v1/agents/me', headers: bearer(key) })
    t.equal(me.statusCode, 200)
    t.equal(me.json().name, 'support-bot')
    await page.getByRole('button', { name: 'I have saved it' }).click()
    await secret.waitFor({ state: 'detached' })
    const row = page.locator('.key-row').filter({ hasText: 'production' })
    t.match(await row.textContent(), /svc_.{4}…/, 'listed masked')
    t.notMatch(await page.locator('body').textContent(), key, 'the full key is gone from the page')
    await page.reload()
    await page.getByRole('heading', { name: 'API keys of Support Bot' }).waitFor()
    await row.waitFor()
    t.notMatch(await page.locator('body').textContent(), key)
    // revoke it: the key stops working
    page.on('dialog', (dialog) => void dialog.accept())
    await page.getByRole('button', { name: 'Revoke key production' }).click()
    await row.getByText(/revoked/).waitFor()
    t.equal((await api({ method: 'GET', url: '/api/v1/agents/me', headers: bearer(key) })).statusCode, 401)
    t.same(problems, [])
  })

  await t.test('the owner edits an agent, is told in words when a name is taken, and deletes it', async (t) => {
    const { page, problems } = await openPage(t, browser)
    await signedInContext(page, ws.owner, 'admin', true)
    page.on('dialog', (dialog) => void dialog.accept())
    const agent = ws.agents[0]!
    await page.goto(`${base}/settings/agents`)
    await page.getByRole('link', { name: `Manage ${agent.name}` }).click()
    await page.getByRole('heading', { name: 'Profile' }).waitFor()
    await page.getByLabel('Display name', { exact: true }).fill('Helper One')
    await page.getByLabel('Description', { exact: true }).fill('Looks things up')
    await page.getByRole('button', { name: 'Save changes' }).click()
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor()
    const stored = await api({ method: 'GET', url: `/api/v1/agents/${agent.id}`, headers: bearer(ws.owner.token) })
    t.equal(stored.json().display_name, 'Helper One')
    t.equal(stored.json().description, 'Looks things up')
    await page.getByRole('heading', { name: /^Helper One/, level: 2 }).waitFor()

    // a taken name, in words; nothing changes
    await page.getByLabel('Name', { exact: true }).fill(ws.agents[1]!.name.toUpperCase())
    await page.getByRole('button', { name: 'Save changes' }).click()
    await page.getByRole('alert').filter({ hasText: 'Another agent already has that name' }).waitFor()
    t.equal((await api({ method: 'GET', url: `/api/v1/agents/${agent.id}`, headers: bearer(ws.owner.token) })).json().name, agent.name)

    await page.getByRole('button', { name: 'Delete Helper One' }).click()
    await page.getByRole('heading', { name: 'All agents (3)' }).waitFor()
    t.equal(await page.getByRole('link', { name: 'Manage Helper One' }).count(), 0, 'gone from the list')
    t.equal((await api({ method: 'GET', url: `/api/v1/agents/${agent.id}`, headers: bearer(ws.owner.token) })).statusCode, 404)
    // its old address says so in words
    await page.goto(`${base}/settings/agents/${agent.id}`)
    await page.getByRole('heading', { name: 'This agent does not exist' }).waitFor()
    t.same(problems, [])
  })

  await t.test('the primary agent cannot be deleted, and the page says why', async (t) => {
    const { page, problems } = await openPage(t, browser, { width: 360, height: 780 })
    await signedInContext(page, ws.owner, 'admin', true)
    await page.goto(`${base}/settings/agents/${ws.primary.id}`)
    await page.getByText('This is the primary agent').waitFor()
    t.equal(await page.getByRole('button', { name: /^Delete / }).count(), 0)
    await checkAccessibility(t, page, 'agent page at 360 px')
    await screenshot(page, 'settings-agent-360')
    await page.goto(`${base}/settings/agents`)
    await page.getByRole('heading', { name: /All agents/ }).waitFor()
    await checkAccessibility(t, page, 'agents at 360 px')
    await screenshot(page, 'settings-agents-360')
    t.same(problems, [])
  })
})

t.test('non-owners: no settings in the UI, and the API refuses them', { skip }, async (t) => {
  const { app, api, base } = await startServer(t)
  const ws = await seedWorkspace(app)
  const browser = await launch(t)
  const pages = ['/settings', '/settings/agents', `/settings/agents/${ws.primary.id}`, '/settings/integrations', '/settings/people', '/settings/workspace']

  for (const [who, person, role] of [
    ['a member', ws.member, 'member'],
    ['an observer', ws.observer, 'observer'],
  ] as const) {
    await t.test(`${who} sees no settings link, and every settings address says only the owner`, async (t) => {
      const { page, problems } = await openPage(t, browser)
      await signedInContext(page, person, role)
      await page.goto(`${base}/`)
      await page.getByRole('navigation', { name: 'Conversations' }).waitFor()
      t.equal(await page.getByRole('link', { name: 'Workspace settings' }).count(), 0)
      for (const path of pages) {
        await page.goto(`${base}${path}`)
        await page.getByRole('heading', { name: 'Only the workspace owner can open settings' }).waitFor()
        t.equal(await page.getByRole('navigation', { name: 'Settings sections' }).count(), 0, `${path}: no settings`)
        t.equal(await page.getByRole('button', { name: /Create|Invite|Save/ }).count(), 0, `${path}: no forms`)
      }
      if (role === 'member') {
        await checkAccessibility(t, page, 'owner-only page')
        await screenshot(page, 'settings-owner-only')
      }
      await page.getByRole('link', { name: 'Back to your conversations' }).click()
      await page.waitForURL((url) => !url.pathname.startsWith('/settings'))
      t.same(problems, [])
    })
  }

  await t.test('the API refuses members, observers and agents the owner-only calls, and nothing changes', async (t) => {
    const agent = ws.agents[0]!
    const calls = [
      { method: 'POST', url: '/api/v1/agents', payload: { name: 'sneaky-bot' } },
      { method: 'PATCH', url: `/api/v1/agents/${agent.id}`, payload: { name: 'renamed-bot' } },
      { method: 'DELETE', url: `/api/v1/agents/${agent.id}` },
      { method: 'POST', url: `/api/v1/agents/${agent.id}/keys`, payload: { name: 'x' } },
      { method: 'DELETE', url: `/api/v1/agents/${agent.id}/keys/${agent.keyId}` },
      { method: 'GET', url: '/api/v1/integrations' },
      { method: 'POST', url: '/api/v1/integrations', payload: { name: 'x', webhook_url: 'https://example.com/h' } },
      { method: 'GET', url: '/api/v1/invites' },
      { method: 'POST', url: '/api/v1/invites', payload: { email: 'new@example.com' } },
      { method: 'GET', url: '/api/v1/registrations' },
      { method: 'PATCH', url: '/api/v1/workspace', payload: { rate_limit_per_minute: 1 } },
    ] as const
    for (const token of [ws.member.token, ws.observer.token, ws.primary.key]) {
      for (const call of calls) {
        const res = await api({ ...call, headers: bearer(token) })
        t.equal(res.statusCode, 403, `${call.method} ${call.url}`)
        t.equal(res.json().code, 'FORBIDDEN')
      }
      // another agent's webhooks do not exist for them
      const hooks = await api({ method: 'GET', url: `/api/v1/agents/${agent.id}/webhooks`, headers: bearer(token) })
      t.equal(hooks.statusCode, 404)
    }
    t.equal((await app.db.prisma.agent.findUniqueOrThrow({ where: { id: agent.id } })).name, agent.name)
    t.equal(await app.db.prisma.agent.count({ where: { name: 'sneaky-bot' } }), 0)
    t.equal(await app.db.prisma.integration.count(), 0)
    t.equal(await app.db.prisma.user.count({ where: { email: 'new@example.com' } }), 0)
    t.equal((await app.db.prisma.instance.findFirstOrThrow()).rateLimitPerMinute, null)
    t.equal((await api({ method: 'GET', url: `/api/v1/agents/${agent.id}/keys`, headers: bearer(ws.owner.token) })).json()[0].revoked_at, null)
  })
})

t.test('owner settings: the loop guard, each setting with its sentence; saved over the API, bad numbers not sent', { skip }, async (t) => {
  const { app, api, base } = await startServer(t)
  const ws = await seedWorkspace(app)
  const browser = await launch(t)
  const { page, problems } = await openPage(t, browser)
  await signedInContext(page, ws.owner, 'admin', true)
  await page.goto(`${base}/settings/workspace`)
  const form = page.getByRole('form', { name: 'Loop guard' })
  await form.waitFor()
  const enabled = form.getByRole('checkbox', { name: /Stop loops between agents/ })
  t.ok(await enabled.isChecked(), 'on by default')
  const turns = form.getByLabel('Turns', { exact: true })
  const window = form.getByLabel('Window (seconds)')
  const depth = form.getByLabel('Longest reply chain')
  t.equal(await turns.inputValue(), '20')
  t.equal(await window.inputValue(), '60')
  t.equal(await depth.inputValue(), '20')
  // One sentence each, tied to its field.
  t.match(await page.locator(`#${await turns.getAttribute('aria-describedby')}`).textContent(), /answer each other .* never counted/)
  t.match(await page.locator(`#${await window.getAttribute('aria-describedby')}`).textContent(), /human message .* starts the count over/)
  t.match(await page.locator(`#${await depth.getAttribute('aria-describedby')}`).textContent(), /answering itself included; 0 means no cap/)
  t.match(await page.locator(`#${await enabled.getAttribute('aria-describedby')}`).textContent(), /on or off together/)

  const save = form.getByRole('button', { name: 'Save loop guard' })
  await turns.fill('0')
  t.ok(await save.isDisabled(), '0 turns cannot be saved')
  t.equal(await turns.getAttribute('aria-invalid'), 'true')
  await turns.fill('8')
  await window.fill('120')
  await depth.fill('0')
  await save.click()
  await form.getByRole('status').filter({ hasText: 'Saved.' }).waitFor()
  t.match((await api({ method: 'GET', url: '/api/v1/workspace', headers: bearer(ws.owner.token) })).json(), {
    loop_guard_enabled: true,
    loop_guard_max_turns: 8,
    loop_guard_window_seconds: 120,
    loop_guard_max_depth: 0,
  })

  await enabled.uncheck()
  t.ok(await turns.isDisabled(), 'the numbers wait while the guard is off')
  await save.click()
  await form.getByRole('status').filter({ hasText: 'Saved.' }).waitFor()
  t.equal((await api({ method: 'GET', url: '/api/v1/workspace', headers: bearer(ws.owner.token) })).json().loop_guard_enabled, false)
  await page.reload()
  await form.waitFor()
  t.notOk(await enabled.isChecked(), 'off after a reload')
  t.equal(await turns.inputValue(), '8')
  await checkAccessibility(t, page, 'loop guard settings')
  await screenshot(page, 'settings-loop-guard')
  t.same(problems, [])
})
