// The query keys of channels and DMs, for channels/queries.ts and everything that sets or
// invalidates them. Apart from queries.ts because sidebar-state.ts needs them and must not load
// the API client: its types are read by unit tests that run without a browser.
/** The sidebar's lists (a reconciliation invalidates everything under `all`, the mention count included). */
export const sidebarKeys = {
  all: ['sidebar'] as const,
  channels: ['sidebar', 'channels'] as const,
  dms: ['sidebar', 'dms'] as const,
}

export const channelKeys = {
  one: (id: string) => ['channel', id] as const,
  members: (id: string) => ['members', id] as const,
  browse: (q: string) => ['browse', q] as const,
}
