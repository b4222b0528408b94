// A TCP proxy in front of the shared PostgreSQL that a test controls, to simulate outages of
// "its" database without touching the real server: `cut()` refuses new connections and drops
// open ones (PostgreSQL stopped), `freeze()` keeps connections open but stops forwarding bytes
// (PostgreSQL stopped with SIGSTOP, or a network that swallows packets), `restore()` goes back
// to normal (frozen connections resume with what they had buffered).
import { once } from 'node:events'
import net from 'node:net'
import type { Test } from 'tap'
import { build, dropWhenDone, type BuildTestOptions, type TestApp } from './helper.ts'
import { createTestDatabase } from './setup/database.ts'

interface Pair {
  client: net.Socket
  upstream: net.Socket
}

export class PgProxy {
  private server: net.Server
  private readonly pairs = new Set<Pair>()
  private mode: 'open' | 'frozen' = 'open'
  port = 0

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {
    this.server = this.createServer()
  }

  private createServer(): net.Server {
    return net.createServer((client) => {
      const upstream = net.connect(this.targetPort, this.targetHost)
      const pair = { client, upstream }
      this.pairs.add(pair)
      const drop = (): void => {
        client.destroy()
        upstream.destroy()
        this.pairs.delete(pair)
      }
      client.on('error', drop).on('close', drop)
      upstream.on('error', drop).on('close', drop)
      if (this.mode === 'open') this.forward(pair)
      else this.hold(pair)
    })
  }

  private forward({ client, upstream }: Pair): void {
    client.pipe(upstream)
    upstream.pipe(client)
  }

  private hold({ client, upstream }: Pair): void {
    client.unpipe(upstream)
    upstream.unpipe(client)
    client.pause()
    upstream.pause()
  }

  async listen(port = 0): Promise<this> {
    this.server.listen(port, '127.0.0.1')
    await once(this.server, 'listening')
    this.port = (this.server.address() as net.AddressInfo).port
    return this
  }

  /** `url` (a database on the proxied server) through this proxy. */
  through(url: string): string {
    const u = new URL(url)
    u.hostname = '127.0.0.1'
    u.port = String(this.port)
    return u.toString()
  }

  /** PostgreSQL "stopped": new connections are refused, open ones are dropped. */
  async cut(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()))
    for (const pair of this.pairs) {
      pair.client.destroy()
      pair.upstream.destroy()
    }
    this.pairs.clear()
    await closed
  }

  /** PostgreSQL "frozen": connections stay open (and new ones are accepted) but nothing moves. */
  freeze(): void {
    this.mode = 'frozen'
    for (const pair of this.pairs) this.hold(pair)
  }

  /** Back to normal, on the same port. */
  async restore(): Promise<void> {
    if (this.mode === 'frozen') {
      this.mode = 'open'
      for (const pair of this.pairs) this.forward(pair)
    }
    if (!this.server.listening) {
      this.server = this.createServer()
      await this.listen(this.port)
    }
  }

  async close(): Promise<void> {
    for (const pair of this.pairs) {
      pair.client.destroy()
      pair.upstream.destroy()
    }
    if (this.server.listening) await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }
}

/** A proxy to the host and port of `url`, closed with the test. */
export async function pgProxy(t: Test, url: string): Promise<PgProxy> {
  const u = new URL(url)
  const proxy = await new PgProxy(u.hostname, Number(u.port || 5432)).listen()
  t.teardown(() => proxy.close())
  return proxy
}

/**
 * A test app whose database (its own, as for any test) is reached through a proxy the test
 * controls: freeze or cut it to simulate PostgreSQL stopping under the app.
 */
export async function buildBehindProxy(t: Test, options: BuildTestOptions = {}): Promise<TestApp & { proxy: PgProxy }> {
  const db = await createTestDatabase()
  dropWhenDone(db.drop)
  const proxy = await pgProxy(t, db.url)
  return { ...(await build(t, { ...options, databaseUrl: proxy.through(db.url) })), proxy }
}
