// The search box of the sidebar: a search landmark whose submit opens the results page.
import { useEffect, useState, type FormEvent } from 'react'
import { useLocation, useSearch } from 'wouter'

export function SearchBox({ onSearch }: { onSearch?: () => void }) {
  const [location, navigate] = useLocation()
  const search = useSearch()
  const current = location === '/search' ? (new URLSearchParams(search).get('q') ?? '') : ''
  const [q, setQ] = useState(current)
  // Follow the page's query (back and forward through searches); leave the box alone elsewhere.
  useEffect(() => {
    if (location === '/search') setQ(current)
  }, [location, current])
  const submit = (event: FormEvent) => {
    event.preventDefault()
    const text = q.trim()
    if (!text) return
    navigate(`/search?${new URLSearchParams({ q: text }).toString()}`)
    onSearch?.()
  }
  return (
    <form role="search" className="search-box" onSubmit={submit}>
      <label htmlFor="search-messages" className="visually-hidden">
        Search messages
      </label>
      <input id="search-messages" type="search" placeholder="Search messages" value={q} onChange={(e) => setQ(e.target.value)} enterKeyHint="search" />
      <button type="submit" className="icon-button" aria-label="Search" disabled={!q.trim()}>
        <svg aria-hidden="true" focusable="false" width="16" height="16" viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth="2" strokeLinecap="round" className="icon">
          <circle cx="11" cy="11" r="7" />
          <path d="M20 20l-3.5-3.5" />
        </svg>
      </button>
    </form>
  )
}
