// Message text as CommonMark with GitHub's extensions (tables, strikethrough, task lists,
// autolinks), turned into React elements from marked's tokens, never into an HTML string: raw
// HTML in a message stays visible text, so nothing a message says can become markup or script.
// Links open in a new tab without the opener or a referrer, and only for web and mail addresses;
// images show as links (a message does not load remote pictures into the reader's page). Plain
// text runs go through `renderText`, which marks mentions.
import { Lexer, type Token, type Tokens } from 'marked'
import { Fragment, type ReactNode } from 'react'

const OPTIONS = { gfm: true, breaks: false }

/** The tokens of a message's text (CommonMark + GFM). A lexer instance keeps its tokens, so each text gets its own. */
export const parseMarkdown = (text: string): Token[] => Lexer.lex(text, OPTIONS)

const SAFE_URL = /^(?:https?:|mailto:)/i
const LANGUAGE = /^[\w+#.-]{1,32}$/

export type TextRenderer = (text: string, key: string) => ReactNode

function safeHref(href: string): string | null {
  const trimmed = href.trim()
  return SAFE_URL.test(trimmed) ? trimmed : null
}

function ExternalLink({ href, children }: { href: string; children: ReactNode }) {
  return (
    <a href={href} target="_blank" rel="noopener noreferrer">
      {children}
    </a>
  )
}

function inline(tokens: Token[] | undefined, text: TextRenderer, key: string): ReactNode[] {
  return (tokens ?? []).map((token, i) => inlineToken(token, text, `${key}.${i}`))
}

function inlineToken(token: Token, text: TextRenderer, key: string): ReactNode {
  switch (token.type) {
    case 'text': {
      const t = token as Tokens.Text
      return t.tokens ? <Fragment key={key}>{inline(t.tokens, text, key)}</Fragment> : <Fragment key={key}>{text(t.text, key)}</Fragment>
    }
    case 'escape':
      return (token as Tokens.Escape).text
    case 'strong':
      return <strong key={key}>{inline((token as Tokens.Strong).tokens, text, key)}</strong>
    case 'em':
      return <em key={key}>{inline((token as Tokens.Em).tokens, text, key)}</em>
    case 'del':
      return <del key={key}>{inline((token as Tokens.Del).tokens, text, key)}</del>
    case 'codespan':
      return <code key={key}>{(token as Tokens.Codespan).text}</code>
    case 'br':
      return <br key={key} />
    case 'link': {
      const link = token as Tokens.Link
      const href = safeHref(link.href)
      const children = inline(link.tokens, (t) => t, key)
      return href ? (
        <ExternalLink key={key} href={href}>
          {children}
        </ExternalLink>
      ) : (
        <Fragment key={key}>{link.raw}</Fragment>
      )
    }
    case 'image': {
      const image = token as Tokens.Image
      const href = safeHref(image.href)
      return href ? (
        <ExternalLink key={key} href={href}>
          {image.text || href}
        </ExternalLink>
      ) : (
        <Fragment key={key}>{image.raw}</Fragment>
      )
    }
    case 'checkbox':
      return <input key={key} type="checkbox" checked={(token as Tokens.Checkbox).checked} disabled aria-label={(token as Tokens.Checkbox).checked ? 'done' : 'not done'} />
    default:
      // Raw HTML (`html`, inline tags) and anything unknown: shown as the text that was written.
      return <Fragment key={key}>{text(token.raw, key)}</Fragment>
  }
}

function block(token: Token, text: TextRenderer, key: string): ReactNode {
  switch (token.type) {
    case 'space':
    case 'def':
      return null
    case 'paragraph':
      return <p key={key}>{inline((token as Tokens.Paragraph).tokens, text, key)}</p>
    case 'heading': {
      // Headings inside a message are emphasis, not landmarks of the page's outline.
      const heading = token as Tokens.Heading
      return (
        <p key={key} className={`md-heading md-h${heading.depth}`}>
          <strong>{inline(heading.tokens, text, key)}</strong>
        </p>
      )
    }
    case 'code': {
      const code = token as Tokens.Code
      const language = code.lang?.split(/\s/)[0] ?? ''
      return (
        <pre key={key} className="md-code" tabIndex={0}>
          <code className={LANGUAGE.test(language) ? `language-${language}` : undefined}>{code.text}</code>
        </pre>
      )
    }
    case 'blockquote':
      return <blockquote key={key}>{blocks((token as Tokens.Blockquote).tokens, text, key)}</blockquote>
    case 'list': {
      const list = token as Tokens.List
      const items = list.items.map((item, i) => (
        <li key={i} className={item.task ? 'md-task' : undefined}>
          {item.loose ? blocks(item.tokens, text, `${key}.${i}`) : tight(item.tokens, text, `${key}.${i}`)}
        </li>
      ))
      return list.ordered ? (
        <ol key={key} start={typeof list.start === 'number' && list.start !== 1 ? list.start : undefined}>
          {items}
        </ol>
      ) : (
        <ul key={key}>{items}</ul>
      )
    }
    case 'table': {
      const table = token as Tokens.Table
      const align = (i: number) => table.align[i] ?? undefined
      return (
        <div key={key} className="md-table" tabIndex={0}>
          <table>
            <thead>
              <tr>
                {table.header.map((cell, i) => (
                  <th key={i} style={align(i) ? { textAlign: align(i)! } : undefined}>
                    {inline(cell.tokens, text, `${key}.h${i}`)}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {table.rows.map((row, r) => (
                <tr key={r}>
                  {row.map((cell, i) => (
                    <td key={i} style={align(i) ? { textAlign: align(i)! } : undefined}>
                      {inline(cell.tokens, text, `${key}.${r}.${i}`)}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )
    }
    case 'hr':
      return <hr key={key} />
    case 'html':
      return <p key={key}>{text(token.raw.replace(/\n+$/, ''), key)}</p>
    default:
      return inlineToken(token, text, key)
  }
}

/** A tight list item's content: its `text` blocks are inline runs; nested lists stay blocks. */
function tight(tokens: Token[], text: TextRenderer, key: string): ReactNode[] {
  return tokens.map((token, i) => (token.type === 'text' ? inlineToken(token, text, `${key}.${i}`) : block(token, text, `${key}.${i}`)))
}

function blocks(tokens: Token[], text: TextRenderer, key: string): ReactNode[] {
  return tokens.map((token, i) => block(token, text, `${key}.${i}`))
}

/** React elements for parsed markdown; each plain text run goes through `text`. */
export function renderMarkdown(tokens: Token[], text: TextRenderer): ReactNode[] {
  return blocks(tokens, text, 'md')
}
