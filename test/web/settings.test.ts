// Owner settings in a real browser: create an agent, create a key for it and see the key once;
// a member sees no settings.
import t from 'tap'
import { bearer } from '../helper.ts'
import { seedWorkspace } from '../fixtures.ts'
import { browserSkip, checkAccessibility, launch, openPage, screenshot, signedInContext, startServer } from './browser.ts'

const skip = browserSkip()

t.test('owner settings', { skip }, async (t) => {
  const { app, api, base } = await startServer(t)
  const ws = await seedWorkspace(app)
  const browser = await launch(t)

  await t.test('the owner creates an agent and a key, and sees the key once', async (t) => {
    const { page, problems } = await openPage(t, browser)
    await signedInContext(page, ws.owner, 'admin', true)
    await page.goto(`${base}/`)
    await page.getByRole('link', { name: 'Workspace settings' }).click()
    await page.getByRole('heading', { name: 'Agents' }).waitFor()
    await page.getByLabel('Name', { exact: true }).fill('support-bot')
    await page.getByLabel('Description (optional)').fill('Answers questions')
    await page.getByRole('button', { name: 'Create agent' }).click()
    await page.getByRole('heading', { name: /API keys of support-bot/ }).waitFor()
    await page.getByLabel('New key name').fill('production')
    await page.getByRole('button', { name: 'Create key' }).click()
    const secret = page.getByTestId('secret')
    await secret.waitFor()
    const key = (await secret.textContent()) ?? ''
    t.match(key, /^svc_[A-Za-z0-9+/]{43}=$/)
    t.match(await page.getByRole('region', { name: 'API key' }).textContent(), /shown only once/)
    await checkAccessibility(t, page, 'settings')
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
    await page.getByRole('heading', { name: 'Agents' }).waitFor()
    t.notMatch(await page.locator('body').textContent(), key)
    t.same(problems, [])
  })

  await t.test('a member sees no settings', async (t) => {
    const { page, problems } = await openPage(t, browser)
    await signedInContext(page, ws.member, 'member')
    await page.goto(`${base}/`)
    await page.getByRole('navigation', { name: 'Conversations' }).waitFor()
    t.equal(await page.getByRole('link', { name: 'Workspace settings' }).count(), 0)
    await page.goto(`${base}/settings`)
    await page.getByText('Only the workspace owner manages agents').waitFor()
    t.same(problems, [])
  })
})
