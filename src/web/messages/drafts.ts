// Unsent text per conversation (and per thread), kept in localStorage under the person's id: it
// survives switching conversations and a reload, and is gone once sent or emptied.
import { useEffect, useState, type Dispatch, type SetStateAction } from 'react'
import { getSession } from '../api/session.ts'

const storageKey = (place: string) => `ams.draft.${getSession()?.user_id ?? 'signed-out'}.${place}`

function read(key: string): string {
  try {
    return localStorage.getItem(key) ?? ''
  } catch {
    return ''
  }
}

/** The draft of a place: `c:<channel id>` or `t:<root id>`. */
export function useDraft(place: string): [string, Dispatch<SetStateAction<string>>] {
  const key = storageKey(place)
  const [text, setText] = useState(() => read(key))
  useEffect(() => {
    try {
      if (text) localStorage.setItem(key, text)
      else localStorage.removeItem(key)
    } catch {
      // Storage full or refused: the draft lives as long as the page.
    }
  }, [key, text])
  return [text, setText]
}
