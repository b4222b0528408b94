// Statement parameters node-postgres would encode slowly.
//
// An array parameter is escaped element by element in JavaScript (quotes and backslashes of each,
// by regular expressions). For a list of ids that is the larger part of a statement's cost on our
// side: 10,000 held keys re-checked every 5 s, the relay's marks of every event.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/**
 * A `uuid[]` parameter: ids shaped as UUIDs go as one array literal (nothing in them needs
 * escaping); a list with anything else goes as the array, escaped as before, so that PostgreSQL
 * refuses a malformed id exactly as it did.
 */
export function uuidArray(ids: readonly string[]): string | readonly string[] {
  return ids.every((id) => UUID.test(id)) ? `{${ids.join(',')}}` : ids
}
