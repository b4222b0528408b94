// The mention rules without a server (src/lib/mentions.ts): which `@` starts a token, how a
// human's handle is derived, and how tokens resolve against a channel's members.
import t from 'tap'
import { handleOf, humanHandle, mentionTokens, resolveMentions, uniqueIds, type Mentionable } from '../../src/lib/mentions.ts'

t.test('tokens: where a mention starts and ends', async (t) => {
  t.same(mentionTokens('@ops-bot please'), [{ handle: 'ops-bot', index: 0, length: 8 }], 'at the start')
  t.same(mentionTokens('thanks @Ops-Bot.'), [{ handle: 'ops-bot', index: 7, length: 8 }], 'lower case; the full stop is not part of it')
  t.same(mentionTokens('ask @ada- now'), [{ handle: 'ada', index: 4, length: 4 }], 'a trailing hyphen is not part of it')
  t.same(mentionTokens('mail bob@example.com'), [], 'an address mentions no one')
  t.same(mentionTokens('a@b x_@c y.@d z+@e'), [], 'nor does an @ after a word character, a dot, a plus or an underscore')
  t.same(mentionTokens('@ alone, @-dash, @@double'), [], 'an @ not followed by a letter or digit')
  t.same(
    mentionTokens('(@a) @b, @a'),
    [
      { handle: 'a', index: 1, length: 2 },
      { handle: 'b', index: 5, length: 2 },
      { handle: 'a', index: 9, length: 2 },
    ],
    'repeats included, in order, after punctuation',
  )
  t.same(mentionTokens('hi @zoë-o-brien'), [{ handle: 'zoë-o-brien', index: 3, length: 12 }], 'letters beyond ASCII')
  t.same(mentionTokens('@Zoe\u0301'), [{ handle: 'zo\u00e9', index: 0, length: 5 }], 'a decomposed accent is normalised (NFC), its written length kept')
})

t.test('a human handle comes from the display name', async (t) => {
  t.equal(humanHandle('Ada Lovelace'), 'ada-lovelace')
  t.equal(humanHandle("Zoë O'Brien"), 'zoë-o-brien')
  t.equal(humanHandle('  --Grace   Hopper!! '), 'grace-hopper', 'runs of other characters become one hyphen, none at the ends')
  t.equal(humanHandle('!!!'), '', 'no letter or digit: no handle')
  t.equal(humanHandle('Aq\u0301el Q'), 'aq\u0301el-q', 'a combining mark with no precomposed letter stays in the handle')
  t.equal(handleOf({ id: '1', type: 'AGENT', name: 'Ops-Bot' }), 'ops-bot', "an agent's handle is its name, lower case")
  t.equal(handleOf({ id: '2', type: 'HUMAN', name: 'Ops Bot' }), 'ops-bot')
})

t.test('resolving against a channel', async (t) => {
  const members: Mentionable[] = [
    { id: 'agent', type: 'AGENT', name: 'helper' },
    { id: 'ada-1', type: 'HUMAN', name: 'Ada Lovelace' },
    { id: 'ada-2', type: 'HUMAN', name: 'ada lovelace' },
    { id: 'grace', type: 'HUMAN', name: 'Grace Hopper' },
    { id: 'human-helper', type: 'HUMAN', name: 'Helper' },
    { id: 'nameless', type: 'HUMAN', name: '???' },
  ]
  t.same(resolveMentions('@grace-hopper and @helper, @grace-hopper again', members), ['grace', 'agent'], 'first-mention order, no repeats; the agent wins a shared handle')
  t.same(resolveMentions('@ada-lovelace', members), [], 'two humans with one handle: no one')
  t.same(resolveMentions('@nobody', members), [], 'not a member: no one')
  t.same(resolveMentions('no mention at all', members), [])
  const axel: Mentionable = { id: 'axel', type: 'HUMAN', name: 'Aq\u0301el' }
  t.same(resolveMentions('hi @aq\u0301el!', [axel]), ['axel'], 'a handle with a combining mark resolves')
  t.same(uniqueIds(['b', 'a', 'b', 'c', 'a']), ['b', 'a', 'c'])
})
