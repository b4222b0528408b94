// Waits in tests are driven by state or events, with a safety deadline, never fixed sleeps.

/** How long a test waits for something that should happen before it calls it a failure. */
export const SAFETY_MS = 30_000

/** Polls `fn` until it returns a truthy value (state in the database, a page of the log), with a safety deadline. */
export async function eventually<T>(fn: () => Promise<T | null | undefined | false>, what: string, intervalMs = 25): Promise<T> {
  const deadline = Date.now() + SAFETY_MS
  for (;;) {
    const value = await fn()
    if (value) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, intervalMs))
  }
}
