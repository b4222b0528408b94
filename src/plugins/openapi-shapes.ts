// The last pass over the OpenAPI document, so that every generator reads it the same way:
// - string enums are `enum`s: a union of single-value enums or `const`s (what TypeBox writes for a
//   union of literals) becomes one `{type: string, enum: [...]}`, and a lone `const` an `enum` of
//   one, so a generator makes one enum type, not one class per value;
// - every object of a response, an event or a delivery body is a named component: an inline
//   object with properties is moved to `components.schemas` under a name derived from where it
//   sits (`Event` + the variant's title, the parent's name + the property's name, the operation's
//   id + `Response`), or under an existing component of exactly the same shape. No two inline
//   objects can then generate the same name (openapi-python-client refused the document when the
//   `channel` of channel.created and channel.updated were both inline).
// The server validates and serializes with the routes' own schemas: this changes the document
// only, never what is accepted or answered (the tests check answers against the document).

type Json = Record<string, unknown>

/** Names that read better than the derived ones (derived name → published name). */
const PREFERRED_NAMES: Record<string, string> = {
  MessageAttachment: 'Attachment',
  MessageReactionsItem: 'ReactionCount',
  EventChannelCreatedChannel: 'EventChannel',
  // Deliveries of two events with one payload shape (created/updated, added/removed).
  AgentWebhookMessageCreatedPayload: 'AgentWebhookMessagePayload',
  AgentWebhookReactionAddedPayload: 'AgentWebhookReactionPayload',
  IntegrationReactionAddedPayload: 'IntegrationReactionPayload',
  AgentStatusOption1: 'AgentStatus',
  MeOption1: 'MeHuman',
  MeOption2: 'MeAgent',
}

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value)

const pascal = (text: string): string =>
  text
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((word) => word[0]!.toUpperCase() + word.slice(1))
    .join('')

/** A string-enum member of a union: `{type: 'string', enum: [...]}` or `{const: '…'}`, nothing else. */
function enumValues(schema: unknown): string[] | null {
  if (!isObject(schema)) return null
  const keys = Object.keys(schema).filter((k) => k !== 'type')
  if (schema.type !== undefined && schema.type !== 'string') return null
  if (keys.length === 1 && keys[0] === 'const' && typeof schema.const === 'string') return [schema.const]
  if (keys.length === 1 && keys[0] === 'enum' && Array.isArray(schema.enum) && schema.enum.every((v) => typeof v === 'string')) return schema.enum
  return null
}

/** Unions of string literals become one `enum`; a lone string `const` an `enum` of one. */
export function collapseEnums(node: unknown): void {
  if (Array.isArray(node)) return node.forEach(collapseEnums)
  if (!isObject(node)) return
  // Examples and defaults are data, not schemas.
  for (const [key, value] of Object.entries(node)) if (key !== 'examples' && key !== 'example' && key !== 'default') collapseEnums(value)
  if (typeof node.const === 'string' && node.enum === undefined) {
    node.type ??= 'string'
    node.enum = [node.const]
    delete node.const
  }
  for (const key of ['anyOf', 'oneOf'] as const) {
    const members = node[key]
    if (!Array.isArray(members)) continue
    const literals = members.map(enumValues)
    if (literals.filter(Boolean).length < 2) continue
    const values = [...new Set(literals.flatMap((v) => v ?? []))]
    const others = members.filter((_, i) => !literals[i])
    if (others.length === 0) {
      delete node[key]
      node.type = 'string'
      node.enum = values
    } else {
      node[key] = [{ type: 'string', enum: values }, ...others]
    }
  }
}

/** Key order does not matter; the root's title and description do not either. */
function canonical(schema: Json): string {
  const sort = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(sort)
    if (!isObject(value)) return value
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sort(value[k])]),
    )
  }
  const { title: _title, description: _description, $id: _id, ...rest } = schema
  return JSON.stringify(sort(rest))
}

const isNamedShape = (schema: unknown): schema is Json => isObject(schema) && schema.type === 'object' && isObject(schema.properties) && Object.keys(schema.properties).length > 0

const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` })

/** Moves inline objects into `components.schemas` (see the file's comment). */
export function nameInlineObjects(doc: { components?: { schemas?: Record<string, Json> }; paths?: Record<string, Record<string, Json>>; webhooks?: Record<string, Record<string, Json>> }): void {
  const components = ((doc.components ??= {}).schemas ??= {})
  const byShape = new Map<string, string>()

  /** The component for `schema` (an existing one of the same shape, or a new one named `name`). */
  const componentFor = (schema: Json, name: string): string => {
    const key = canonical(schema)
    const known = byShape.get(key)
    if (known) return known
    const preferred = PREFERRED_NAMES[name] ?? name
    let unique = preferred
    for (let i = 2; components[unique]; i++) unique = `${preferred}${i}`
    components[unique] = schema
    byShape.set(key, unique)
    return unique
  }

  /** Names the objects below `node` (children first), `name` being the name of where it sits. */
  const visit = (node: unknown, name: string): unknown => {
    if (Array.isArray(node)) return node
    if (!isObject(node)) return node
    if (isObject(node.properties)) for (const [prop, child] of Object.entries(node.properties)) node.properties[prop] = hoist(child, `${name}${pascal(prop)}`)
    if (node.items !== undefined) node.items = hoist(node.items, `${name}Item`)
    for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
      const members = node[key]
      if (Array.isArray(members)) node[key] = members.map((m, i) => hoist(m, isObject(m) && typeof m.title === 'string' ? `${name}${pascal(m.title)}` : `${name}Option${i + 1}`))
    }
    return node
  }
  const hoist = (node: unknown, name: string): unknown => {
    visit(node, name)
    return isNamedShape(node) ? ref(componentFor(node, name)) : node
  }

  // The components first (their shapes are the ones to reuse), then responses and deliveries.
  for (const [name, schema] of Object.entries(components)) {
    visit(schema, name)
    if (isNamedShape(schema)) byShape.set(canonical(schema), name)
  }
  for (const [path, operations] of Object.entries(doc.paths ?? {})) {
    for (const [method, operation] of Object.entries(operations)) {
      const base = pascal(typeof operation.operationId === 'string' ? operation.operationId : `${method} ${path}`)
      for (const [status, response] of Object.entries((operation.responses ?? {}) as Record<string, Json>)) {
        for (const media of Object.values((response.content ?? {}) as Record<string, Json>)) {
          if (media.schema !== undefined) media.schema = hoist(media.schema, `${base}Response${status.startsWith('2') ? '' : status}`)
        }
      }
    }
  }
  for (const operations of Object.values(doc.webhooks ?? {})) {
    for (const operation of Object.values(operations)) {
      const body = (operation.requestBody as Json | undefined)?.content as Record<string, Json> | undefined
      for (const media of Object.values(body ?? {})) {
        if (media.schema !== undefined) media.schema = hoist(media.schema, pascal(String(operation.operationId)))
      }
    }
  }
}
