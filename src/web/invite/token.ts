/**
 * The invite token of a `?token=` query, in either form: percent-encoded (what the API builds) or
 * pasted raw, where a `+` of the base64 arrives as a space. Base64 holds no spaces, so turning
 * them back is safe.
 */
export function inviteTokenFrom(search: string): string {
  const value = new URLSearchParams(search).get('token') ?? ''
  return value.trim().replaceAll(' ', '+')
}
