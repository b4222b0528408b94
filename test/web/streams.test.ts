// A streaming message in a real browser (issue 25): the agent's text grows in place with a
// blinking cursor, its status and steps beside it; a reload shows the text so far and the status;
// Stop reaches the server and shows "stopping…"; the finished message replaces the stream. axe on
// the screen.
import t from 'tap'
import { bearer, seedWorkspace } from '../support/index.ts'
import { browserSkip, checkAccessibility, launch, openPage, screenshot, signedInContext, startServer } from './browser.ts'

const skip = browserSkip()
const json = { 'content-type': 'application/json' }

t.test('a streaming message grows in place, shows its steps, and can be stopped', { skip }, async (t) => {
  const { app, api, base } = await startServer(t)
  const ws = await seedWorkspace(app)
  const channel = (await api({ method: 'POST', url: '/api/v1/channels', headers: { ...bearer(ws.owner.token), ...json }, payload: { name: 'general' } })).json()
  for (const id of [ws.member.id, ws.primary.id])
    await api({ method: 'POST', url: `/api/v1/channels/${channel.id}/members`, headers: { ...bearer(ws.owner.token), ...json }, payload: { user_id: id } })
  const agent = (method: 'POST' | 'PUT', path: string, payload?: Record<string, unknown>) =>
    api({ method, url: `/api/v1/channels/${channel.id}/messages${path}`, headers: { ...bearer(ws.primary.key), ...json }, ...(payload === undefined ? {} : { payload }) })
  const m = (await agent('POST', '', { stream: true, text: 'Let me check' })).json()
  const status = {
    title: 'Reading the logs…',
    steps: [
      { title: 'Open the logs', state: 'complete' },
      { title: 'Find the error', state: 'in_progress' },
    ],
  }
  t.equal((await agent('PUT', `/${m.id}/stream/status`, status)).statusCode, 200)

  const browser = await launch(t)
  const { page } = await openPage(t, browser)
  await signedInContext(page, ws.member, 'member')
  await page.goto(`${base}/c/${channel.id}`)
  const message = page.getByTestId('message').filter({ hasText: 'Let me check' })
  await message.waitFor()
  await message.getByTestId('stream-cursor').waitFor()
  await message.getByText('Reading the logs…').waitFor()
  await message.getByText('Find the error').waitFor()

  // Appends grow the text in place.
  t.equal((await agent('POST', `/${m.id}/stream`, { append: ' the logs' })).statusCode, 200)
  await message.getByText('Let me check the logs').waitFor()
  await checkAccessibility(t, page, 'streaming message')
  await screenshot(page, 'stream-growing')

  // A reload shows the text so far and the status.
  await page.reload()
  const again = page.getByTestId('message').filter({ hasText: 'Let me check the logs' })
  await again.waitFor()
  await again.getByText('Reading the logs…').waitFor()

  // Stop: the server records it and the message says "stopping…".
  await again.getByRole('button', { name: /^Stop / }).click()
  await again.getByTestId('stream-stopping').waitFor()
  const { rows } = await app.db.pool.query('SELECT stop_requested_by FROM message_streams WHERE message_id = $1', [m.id])
  t.equal(rows[0]?.stop_requested_by, ws.member.id)

  // The agent finishes: the final text, no cursor, no status.
  t.equal((await agent('POST', `/${m.id}/stream/finish`, { text: 'Found it: the disk was full.' })).statusCode, 200)
  const done = page.getByTestId('message').filter({ hasText: 'Found it: the disk was full.' })
  await done.waitFor()
  await done.getByTestId('stream-cursor').waitFor({ state: 'detached' })
  t.equal(await done.getByTestId('stream-bar').count(), 0)
  t.equal(await page.getByTestId('message').count(), 1, 'one message, not a second one at the end')
})

t.test('in a thread panel: an agent status without a stream, then a streamed reply that grows live; counted once', { skip }, async (t) => {
  const { app, api, base } = await startServer(t)
  const ws = await seedWorkspace(app)
  const channel = (await api({ method: 'POST', url: '/api/v1/channels', headers: { ...bearer(ws.owner.token), ...json }, payload: { name: 'help' } })).json()
  for (const id of [ws.member.id, ws.primary.id])
    await api({ method: 'POST', url: `/api/v1/channels/${channel.id}/members`, headers: { ...bearer(ws.owner.token), ...json }, payload: { user_id: id } })
  const root = (await api({ method: 'POST', url: `/api/v1/channels/${channel.id}/messages`, headers: { ...bearer(ws.member.token), ...json }, payload: { text: 'Why is the build red?' } })).json()
  const agent = (method: 'POST' | 'PUT', path: string, payload?: Record<string, unknown>) =>
    api({ method, url: `/api/v1/channels/${channel.id}/messages${path}`, headers: { ...bearer(ws.primary.key), ...json }, ...(payload === undefined ? {} : { payload }) })
  const status = {
    title: 'Reading the CI logs…',
    steps: [
      { title: 'Fetch the logs', state: 'complete' },
      { title: 'Find the failing test', state: 'in_progress' },
    ],
  }
  const browser = await launch(t)
  for (const [width, height, name] of [
    [1280, 800, 'desktop'],
    [360, 740, '360'],
  ] as const) {
    // Set before the page opens: the panel reads it (a late joiner).
    t.equal((await agent('PUT', `/${root.id}/thread/status`, status)).statusCode, 200)
    const { page } = await openPage(t, browser, { width, height })
    await signedInContext(page, ws.member, 'member')
    await page.goto(`${base}/c/${channel.id}?thread=${root.id}`)
    const panel = page.getByTestId('thread-panel')
    await panel.getByTestId('thread-status').getByText('Reading the CI logs…').waitFor()
    await panel.getByText('Find the failing test').waitFor()
    if (name === 'desktop') {
      // Under the root in the channel too, once a frame told it (a new status, live).
      t.equal((await agent('PUT', `/${root.id}/thread/status`, { ...status, title: 'Running the test…' })).statusCode, 200)
      await page
        .getByRole('log', { name: /messages/i })
        .getByTestId('thread-status')
        .getByText('Running the test…')
        .waitFor()
      await panel.getByText('Running the test…').waitFor()
    }
    await checkAccessibility(t, page, `thread status, ${name}`)
    await screenshot(page, `thread-status-${name}`)

    // The agent streams its reply: the status goes, the reply grows in the panel.
    const r = (await agent('POST', '', { stream: true, text: `On ${name}: the flaky`, thread_id: root.id })).json()
    await panel.getByTestId('thread-status').waitFor({ state: 'detached' })
    const reply = panel.getByTestId('message').filter({ hasText: `On ${name}: the flaky` })
    await reply.getByTestId('stream-cursor').waitFor()
    t.equal((await agent('POST', `/${r.id}/stream`, { append: ' test is test_upload' })).statusCode, 200)
    await reply.getByText(`On ${name}: the flaky test is test_upload`).waitFor()
    await reply.getByRole('button', { name: /^Stop / }).waitFor()
    await checkAccessibility(t, page, `streaming reply in a thread, ${name}`)
    await screenshot(page, `thread-stream-${name}`)
    t.equal((await agent('POST', `/${r.id}/stream/finish`, {})).statusCode, 200)
    await reply.getByTestId('stream-cursor').waitFor({ state: 'detached' })
    t.equal(
      await panel
        .getByTestId('message')
        .filter({ hasText: `On ${name}: the flaky test is test_upload` })
        .count(),
      1,
      'one reply, replaced at the end',
    )
    // Counted once: at its start (the server's count), not again by the new_message at its end.
    const count = name === 'desktop' ? '1 reply' : '2 replies'
    await page.waitForTimeout(500)
    t.equal(await panel.getByRole('separator', { name: count }).count(), 1, `the thread says ${count}`)
    await page.close()
  }
})
