// A start-up failure the operator can act on: printed as one line, "<cause>; fix: <fix>", by
// src/server.ts (and the test setup), never as a stack.
export class StartupError extends Error {
  constructor(
    readonly reason: string,
    readonly fix: string,
  ) {
    super(`${reason}; fix: ${fix}`)
    this.name = 'StartupError'
  }
}

interface SystemErrorLike {
  code?: string
  errno?: number
  syscall?: string
  address?: string
  port?: number
  path?: string
  message?: string
}

/** One line for any start-up failure: the StartupError's own, or a known system error explained. */
export function describeStartupFailure(error: unknown, context: { databaseUrl?: string; port?: number; host?: string } = {}): string {
  if (error instanceof StartupError) return error.message
  const e = (error ?? {}) as SystemErrorLike
  const message = (e.message ?? String(error)).split('\n')[0]
  const where = (() => {
    if (!context.databaseUrl) return 'PostgreSQL'
    try {
      const url = new URL(context.databaseUrl)
      return `PostgreSQL at ${url.hostname}:${url.port || 5432}`
    } catch {
      return 'PostgreSQL'
    }
  })()
  switch (e.code) {
    case 'EADDRINUSE':
      return `port ${context.port ?? e.port} on ${context.host ?? e.address} is already in use; fix: stop the other server or set PORT to a free port`
    case 'EADDRNOTAVAIL':
      return `cannot listen on ${context.host ?? e.address}: no such local address; fix: set HOST to an address of this machine (127.0.0.1 or 0.0.0.0)`
    case 'EACCES':
    case 'EPERM':
      if (e.syscall === 'listen' || e.syscall === 'bind') return `not allowed to listen on port ${context.port ?? e.port}; fix: set PORT to 1024 or above`
      return `permission denied: ${message}; fix: make the path writable by this user or set DATA_DIR / UPLOAD_DIR to a writable folder`
    case 'ECONNREFUSED':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
      return `cannot reach ${where} (${e.code}); fix: start it or correct DATABASE_URL (unset DATABASE_URL to use the embedded PostgreSQL)`
    case '28P01':
    case '28000':
      return `${where} refused the credentials in DATABASE_URL (${message}); fix: correct the user and password in DATABASE_URL`
    case '3D000':
      return `${where}: ${message}; fix: create the database (createdb) or correct its name in DATABASE_URL`
    case 'ENOSPC':
      return `the disk is full (${message}); fix: free space on the disk holding DATA_DIR`
  }
  return `${message}; fix: see the message; run with LOG_LEVEL=debug for the stack trace`
}
