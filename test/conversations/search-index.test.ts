// The full-text index's pending list is merged in the background (src/workers/search-index.ts),
// so no post pays for the merge; search finds messages either way.
import t from 'tap'
import { eventually } from '../webhooks/helpers.ts'
import { setup } from './fixtures/support.ts'
import { bearer, createChannel, disableLoopGuard, post } from '../support/index.ts'

async function postSome(c: Awaited<ReturnType<typeof setup>>, word: string): Promise<void> {
  await disableLoopGuard(c.app) // 40 agent messages in a row: not what this tests
  const channel = await createChannel(c.api, c.tok.a1, `flush-${word}`)
  for (let i = 0; i < 40; i++) await post(c.api, c.tok.a1, channel.id, `${word} number ${i} with a few more words to index`)
}

t.test('without the background flush, new messages wait in the pending list', async (t) => {
  const c = await setup(t, { SEARCH_INDEX_FLUSH_MS: '0' })
  await postSome(c, 'pending')
  t.equal(c.app.searchIndex!.pagesFlushed, 0, 'no flush ran')
  t.ok((await c.app.searchIndex!.flush()) > 0, 'inserts had appended to the pending list; a flush merges it')
})

t.test('the background flush merges the pending list, and search still finds every message', async (t) => {
  const c = await setup(t, { SEARCH_INDEX_FLUSH_MS: '100' })
  await postSome(c, 'merged')
  await eventually(async () => c.app.searchIndex!.pagesFlushed > 0, 'a background flush')
  const res = await c.api({ method: 'GET', url: '/api/v1/messages/search?q=merged&limit=100', headers: bearer(c.tok.a1) })
  t.equal(res.statusCode, 200)
  t.equal(res.json().results.length, 40, 'search finds every message')
})
