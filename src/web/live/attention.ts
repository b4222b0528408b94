// What asks for the person's attention: the unread total and the mentions still in their inbox
// (mentions/queries.ts) shown in the tab's title and favicon, and desktop notifications for DMs
// and mentions, which the person turns on.
import { useEffect, useSyncExternalStore } from 'react'
import { attentionTitle, TITLE } from './attention-math.ts'

export { attentionTitle, unreadTotal } from './attention-math.ts'

const PLAIN_ICON = "<rect width='16' height='16' rx='4' fill='#4f46e5'/>"

function favicon(unread: number, mentions: number): string {
  const badge = mentions > 0 ? "<circle cx='12' cy='4' r='4' fill='#dc2626'/>" : unread > 0 ? "<circle cx='12' cy='4' r='3.5' fill='#f59e0b'/>" : ''
  return `data:image/svg+xml,${encodeURIComponent(`<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 16 16'>${PLAIN_ICON}${badge}</svg>`)}`
}

export function useAttentionInTab(unread: number, mentions: number): void {
  useEffect(() => {
    document.title = attentionTitle(unread, mentions)
    let link = document.querySelector<HTMLLinkElement>('link[rel="icon"]')
    if (!link) {
      link = document.createElement('link')
      link.rel = 'icon'
      document.head.appendChild(link)
    }
    link.href = favicon(unread, mentions)
    link.dataset.unread = String(unread)
    link.dataset.mentions = String(mentions)
  }, [unread, mentions])
  useEffect(
    () => () => {
      document.title = TITLE
    },
    [],
  )
}

// Desktop notifications: off until the person turns them on here (the browser then asks).
const NOTIFY_KEY = 'ams.notify'
const notifyListeners = new Set<() => void>()

export const notificationsSupported = () => typeof Notification !== 'undefined'
export const notificationsOn = () => notificationsSupported() && Notification.permission === 'granted' && localStorage.getItem(NOTIFY_KEY) === '1'

export async function setNotifications(on: boolean): Promise<boolean> {
  if (on && notificationsSupported() && Notification.permission !== 'granted') await Notification.requestPermission()
  if (on && notificationsSupported() && Notification.permission === 'granted') localStorage.setItem(NOTIFY_KEY, '1')
  else localStorage.removeItem(NOTIFY_KEY)
  notifyListeners.forEach((listener) => listener())
  return notificationsOn()
}

export const useNotificationsOn = (): boolean =>
  useSyncExternalStore((listener) => {
    notifyListeners.add(listener)
    return () => notifyListeners.delete(listener)
  }, notificationsOn)

/** Shows a desktop notification, unless the conversation is already in front of the person. */
export function notify(channelId: string, title: string, body: string): void {
  if (!notificationsOn()) return
  if (document.visibilityState === 'visible' && location.pathname === `/c/${channelId}`) return
  const shown = new Notification(title, { body: body.length > 140 ? `${body.slice(0, 139)}…` : body, tag: channelId })
  shown.onclick = () => {
    window.focus()
    history.pushState(null, '', `/c/${channelId}`)
    dispatchEvent(new PopStateEvent('popstate'))
    shown.close()
  }
}
