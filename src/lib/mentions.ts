// Mentions in message text, without any database: how `@name` tokens are found and how a human's
// handle is derived from the display name (docs/decisions.md, "Mentions"). Pure, so the web UI
// can apply exactly the same rules when it highlights and completes mentions.

/**
 * An `@` that starts a mention: at the start of the text or after a character that cannot be part
 * of a word or an address (so `bob@example.com` mentions no one), followed by a letter or digit.
 * The token runs over letters (with their combining marks: "Zoe" and U+0301, as some keyboards
 * write "Zoé"), digits and hyphens (what agent names and human handles are made of); a trailing
 * hyphen is not part of it, nor is punctuation ("thanks @ops-bot." mentions `ops-bot`).
 */
const MENTION_RE = /(?<![\p{L}\p{M}\p{N}_.+@-])@([\p{L}\p{N}][\p{L}\p{M}\p{N}-]*)/gu

/** A mention token as it appears in a text, and where. */
export interface MentionToken {
  /** The name after the `@`, lower case (names match case-insensitively). */
  handle: string
  /** Index of the `@` in the text (UTF-16 units). */
  index: number
  /** Length of `@` + name as written. */
  length: number
}

/** The `@name` tokens of a text, in order (repeats included). */
export function mentionTokens(text: string): MentionToken[] {
  const out: MentionToken[] = []
  for (const match of text.matchAll(MENTION_RE)) {
    const name = match[1]!.replace(/-+$/u, '')
    out.push({ handle: name.normalize('NFC').toLowerCase(), index: match.index, length: name.length + 1 })
  }
  return out
}

/**
 * The handle a human is mentioned by: the display name in lower case, each run of characters
 * other than letters (with their combining marks) and digits replaced by one hyphen ("Ada Lovelace" → `ada-lovelace`,
 * "Zoë O'Brien" → `zoë-o-brien`). Empty when the name has no letter or digit.
 */
export function humanHandle(displayName: string): string {
  return displayName
    .normalize('NFC')
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}]+/gu, '-')
    .replace(/^-+|-+$/g, '')
}

/** A member of a channel as mentions see it. */
export interface Mentionable {
  id: string
  type: 'AGENT' | 'HUMAN'
  /** An agent's unique `name`, or a human's display name. */
  name: string
}

/** The handle of a member: an agent's name (lower case), a human's derived handle. */
export function handleOf(member: Mentionable): string {
  return member.type === 'AGENT' ? member.name.toLowerCase() : humanHandle(member.name)
}

/**
 * Resolves the tokens of a text against a channel's members. An agent's name is unique in the
 * workspace and wins; a human handle resolves only when exactly one human of the channel has it
 * (two "Ada Lovelace" in one channel: `@ada-lovelace` addresses no one; use explicit ids).
 * Returns the ids in the order of their first mention, without repeats.
 */
export function resolveMentions(text: string, members: readonly Mentionable[]): string[] {
  const tokens = mentionTokens(text)
  if (!tokens.length) return []
  const agents = new Map<string, string>()
  const humans = new Map<string, string | null>() // null: more than one human has this handle
  for (const m of members) {
    const handle = handleOf(m)
    if (!handle) continue
    if (m.type === 'AGENT') agents.set(handle, m.id)
    else humans.set(handle, humans.has(handle) ? null : m.id)
  }
  const out: string[] = []
  for (const { handle } of tokens) {
    const id = agents.get(handle) ?? humans.get(handle) ?? null
    if (id && !out.includes(id)) out.push(id)
  }
  return out
}

/** Ids in order without repeats. */
export function uniqueIds(ids: Iterable<string>): string[] {
  return [...new Set(ids)]
}
