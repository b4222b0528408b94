// What a reaction may be (docs/decisions.md, "Reactions"): exactly one emoji grapheme, or a
// short `:shortcode:` for custom names. Pure, so the web UI's picker and the tests can use it.

const segmenter = new Intl.Segmenter('en', { granularity: 'grapheme' })

// A grapheme counts as an emoji when it holds a pictographic character, a pair of regional
// indicators (a flag) or a keycap (1️⃣). Text characters with an emoji variant (©, ™) need
// their variation selector U+FE0F to count.
const EMOJI_GRAPHEME = /^(?:\p{Extended_Pictographic}|\p{Emoji_Presentation}|\p{Regional_Indicator}{2}|[0-9#*]\uFE0F?\u20E3)/u
const TEXT_ONLY = /^[\p{L}\p{N}\p{P}\p{Z}\p{S}]$/u
const SHORTCODE = /^:[a-z0-9_+-]{1,32}:$/

/** The longest emoji accepted, in UTF-16 units (long ZWJ family sequences stay well under it). */
export const MAX_EMOJI_LENGTH = 64

/** Whether `value` is one emoji or a `:shortcode:`. */
export function isReactionEmoji(value: string): boolean {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_EMOJI_LENGTH) return false
  if (SHORTCODE.test(value)) return true
  const graphemes = [...segmenter.segment(value)]
  if (graphemes.length !== 1) return false
  if (!EMOJI_GRAPHEME.test(value)) return false
  // A lone text-default symbol (e.g. ©, ™, ↔) without U+FE0F is text, not an emoji.
  return !(TEXT_ONLY.test(value) && !/\p{Emoji_Presentation}/u.test(value))
}
