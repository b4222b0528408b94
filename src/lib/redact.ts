// Secrets in query strings (a WebSocket `?token=`, an invite `?token=`, an `?api_key=` a client
// library adds) must never reach the log. Parameter names are compared after percent-decoding,
// as the server itself reads them: `%74oken` is `token`.

// Any name that looks like it carries a credential: token, api_key, apikey, key, secret,
// password, signature, access_token, client_secret, auth…
const SENSITIVE = /token|key|secret|passw|pwd|signature|sig$|credential|auth|session|jwt|bearer/i

function decodedName(name: string): string {
  try {
    return decodeURIComponent(name.replace(/\+/g, ' '))
  } catch {
    // An invalid encoding: compare what can be compared (the server refuses such a URL anyway).
    return name
  }
}

/** The URL with the value of every credential-like query parameter replaced by `[redacted]`. */
export function redactUrl(url: string): string {
  const at = url.indexOf('?')
  if (at < 0) return url
  const query = url
    .slice(at + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=')
      const name = eq < 0 ? pair : pair.slice(0, eq)
      return SENSITIVE.test(decodedName(name)) ? `${name}=[redacted]` : pair
    })
    .join('&')
  return `${url.slice(0, at)}?${query}`
}
