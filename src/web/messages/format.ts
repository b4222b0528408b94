// Dates and sizes for people, through Intl in the browser's language and time zone.
const time = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' })
const full = new Intl.DateTimeFormat(undefined, { dateStyle: 'full', timeStyle: 'short' })
const day = new Intl.DateTimeFormat(undefined, { weekday: 'long', month: 'long', day: 'numeric' })
const dayWithYear = new Intl.DateTimeFormat(undefined, { weekday: 'long', month: 'long', day: 'numeric', year: 'numeric' })
const relative = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' })

export const formatTime = (iso: string) => time.format(new Date(iso))
export const formatFull = (iso: string) => full.format(new Date(iso))

/** The local calendar day of a timestamp, as a key for day separators. */
export const dayKey = (iso: string) => {
  const d = new Date(iso)
  return `${d.getFullYear()}-${d.getMonth()}-${d.getDate()}`
}

export function formatDay(iso: string, now = new Date()): string {
  const d = new Date(iso)
  const startOf = (x: Date) => new Date(x.getFullYear(), x.getMonth(), x.getDate()).getTime()
  const days = Math.round((startOf(d) - startOf(now)) / 86_400_000)
  if (days === 0 || days === -1) {
    const word = relative.format(days, 'day')
    return word.charAt(0).toUpperCase() + word.slice(1)
  }
  return (d.getFullYear() === now.getFullYear() ? day : dayWithYear).format(d)
}

const units = ['bytes', 'KB', 'MB', 'GB']
export function formatSize(bytes: number): string {
  let value = bytes
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit += 1
  }
  return `${unit === 0 ? value : value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`
}
