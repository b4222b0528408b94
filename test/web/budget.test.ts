// The budget "a channel of 10,000 messages scrolls without loading them all", in a real browser:
// 10,000 messages seeded straight into the database; the page opens at the newest, and scrolling
// up screen by screen fetches older pages of 50 only as they come near, while the page holds a
// bounded number of message nodes and the view never jumps (the oldest message in view only ever
// gets older on the way up).
import t from 'tap'
import { browserSkip, launch, openPage, signedInContext, startServer } from './browser.ts'
import { seedMessages } from './seed.ts'
import { createChannel, seedWorkspace } from '../support/index.ts'

const skip = browserSkip()
const TOTAL = 10_000

t.test('a channel of 10,000 messages', { skip }, async (t) => {
  const { app, api, base } = await startServer(t)
  const ws = await seedWorkspace(app)
  const channel = await createChannel(api, ws.owner.token, 'big', { description: null, members: [ws.member.id] })
  const agent = { id: ws.primary.id, name: 'primary-agent', type: 'AGENT' as const }
  await seedMessages(app, channel.id, TOTAL, (i) => ({ author: agent, text: `Message ${i}` }))
  const counted = await app.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM messages WHERE channel_id = $1', [channel.id])
  t.equal(counted.rows[0]!.n, TOTAL)

  const browser = await launch(t)
  const { page, problems } = await openPage(t, browser)
  await signedInContext(page, ws.member, 'member')
  const pages: string[] = []
  page.on('request', (request) => {
    const url = new URL(request.url())
    if (url.pathname === `/api/v1/channels/${channel.id}/messages`) pages.push(url.search)
  })
  await page.goto(`${base}/c/${channel.id}`)
  await page
    .getByTestId('message')
    .filter({ hasText: `Message ${TOTAL - 1}` })
    .waitFor()
  t.same(pages, ['?limit=50&threads=roots'], 'opening fetches the newest page only (roots: replies are read in their thread)')

  const list = page.getByRole('log', { name: 'Messages' })
  // The lowest message number in view, and how many message nodes the page holds.
  const look = () =>
    list.evaluate((el) => {
      type Box = { top: number; bottom: number }
      type Node = { getBoundingClientRect: () => Box; textContent: string | null }
      const scroller = el as unknown as Node & { querySelectorAll: (s: string) => Node[] }
      const view = scroller.getBoundingClientRect()
      const nodes = Array.from(scroller.querySelectorAll('[data-testid="message"]'))
      const inView = nodes.map((n) => ({ box: n.getBoundingClientRect(), n: Number(/Message (\d+)/.exec(n.textContent ?? '')?.[1]) })).filter((m) => m.box.bottom > view.top && m.box.top < view.bottom)
      return { oldestInView: Math.min(...inView.map((m) => m.n)), nodes: nodes.length }
    })

  const goal = TOTAL - 1 - 6 * 50 // six pages back
  let previous = (await look()).oldestInView
  let maxNodes = 0
  const jumps: string[] = []
  for (let step = 0; step < 400 && previous > goal; step++) {
    await list.evaluate((el) => {
      const box = el as unknown as { scrollTop: number; clientHeight: number }
      box.scrollTop -= 0.8 * box.clientHeight
    })
    await page.waitForTimeout(60)
    const now = await look()
    maxNodes = Math.max(maxNodes, now.nodes)
    if (now.oldestInView > previous) jumps.push(`step ${step}: ${previous} → ${now.oldestInView}`)
    previous = Math.min(previous, now.oldestInView)
  }
  t.ok(previous <= goal, `scrolled up to message ${previous}`)
  t.same(jumps, [], 'the view never jumped back towards the newest while older pages loaded')
  t.ok(maxNodes <= 60, `the page never held more than 60 message nodes (at most ${maxNodes})`)
  const older = pages.filter((p) => p.includes('before='))
  t.ok(older.length >= 6 && older.length <= 8, `older pages were fetched on demand: ${older.length} of ${TOTAL / 50}`)
  t.equal(pages.length, older.length + 1, 'nothing else was fetched')
  t.same(problems, [])
})
