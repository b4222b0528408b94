// A search snippet with its matches highlighted. The server escapes the text (&amp; &lt; &gt;) and
// adds only <mark> tags; we split on those and unescape the rest ourselves, so no markup from a
// message ever reaches the page as HTML.
const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>' }
const unescape = (text: string) => text.replace(/&(amp|lt|gt);/g, (entity) => ENTITIES[entity]!)

export function Snippet({ html }: { html: string }) {
  const parts = html.split(/(<mark>|<\/mark>)/)
  let marked = false
  const out: JSX.Element[] = []
  parts.forEach((part, index) => {
    if (part === '<mark>') marked = true
    else if (part === '</mark>') marked = false
    else if (part) out.push(marked ? <mark key={index}>{unescape(part)}</mark> : <span key={index}>{unescape(part)}</span>)
  })
  return <span className="snippet">{out}</span>
}
