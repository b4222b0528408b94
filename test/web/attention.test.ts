// The arithmetic of attention, without a browser: the unread total leaves out the conversation on
// screen (and DMs count like channels), and the tab title reads "(N) …" or "(N · M @) …".
import t from 'tap'
import { attentionTitle, unreadTotal } from '../../src/web/live/attention-math.ts'
import type { ChannelSummary, DmSummary } from '../../src/web/channels/sidebar-state.ts'

const channel = (id: string, unread: number, type: 'channel' | 'dm' = 'channel') =>
  ({ id, name: id, type, description: '', private: false, unread_count: unread, last_read_message_id: null, is_member: true, last_message_at: null }) as ChannelSummary
const dm = (id: string, unread: number) => ({ id, unread_count: unread }) as DmSummary

t.test('unread total', async (t) => {
  const channels = [channel('a', 3), channel('b', 5), channel('d1', 7, 'dm')]
  const dms = [dm('d1', 7), dm('d2', 1)]
  t.equal(unreadTotal(channels, dms, null), 16, 'channels and DMs, each once (a DM in the channel list is not counted twice)')
  t.equal(unreadTotal(channels, dms, 'b'), 11, 'the conversation on screen is left out')
  t.equal(unreadTotal(channels, dms, 'd1'), 9)
  t.equal(unreadTotal(undefined, undefined, null), 0, 'nothing loaded yet')
})

t.test('tab title', async (t) => {
  t.equal(attentionTitle(0, 0), 'Agent Messaging')
  t.equal(attentionTitle(4, 0), '(4) Agent Messaging')
  t.equal(attentionTitle(4, 2), '(4 · 2 @) Agent Messaging')
  t.equal(attentionTitle(0, 1), '(0 · 1 @) Agent Messaging')
  t.equal(attentionTitle(250, 0), '(99+) Agent Messaging')
})
