// The serializer's copy of a response schema (src/lib/serializer-compiler.ts): `anyOf: [T, null]`
// of an inline type becomes `{...T, nullable: true}`, and the JSON written is the same as with the
// `anyOf`, for null and for values, for every field of the real message schema.
import t from 'tap'
import fastJson from 'fast-json-stringify'
import { Type } from 'typebox'
import { nullableForSerializer } from '../../src/lib/serializer-compiler.ts'
import { MessageSchema } from '../../src/schemas/message.ts'
import { sampleOf, type SampleSchema as Schema } from '../support/schema-sample.ts'

t.test('what is rewritten, and what is left', async (t) => {
  const nullableString = { description: 'when', anyOf: [{ type: 'string', format: 'date-time' }, { type: 'null' }] }
  t.same(nullableForSerializer(nullableString), { description: 'when', type: 'string', format: 'date-time', nullable: true })
  t.same(nullableForSerializer({ anyOf: [{ type: 'null' }, { type: 'integer' }] }), { type: 'integer', nullable: true }, 'null first too')
  const nested = { type: 'object', properties: { a: { anyOf: [{ type: 'object', properties: { b: { anyOf: [{ type: 'boolean' }, { type: 'null' }] } } }, { type: 'null' }] } } }
  t.same(nullableForSerializer(nested), { type: 'object', properties: { a: { type: 'object', properties: { b: { type: 'boolean', nullable: true } }, nullable: true } } }, 'at every depth')
  const left = [
    { anyOf: [{ $ref: 'Message#' }, { type: 'null' }] },
    { anyOf: [{ type: 'string' }, { type: 'integer' }] },
    { anyOf: [{ type: 'string' }, { type: 'integer' }, { type: 'null' }] },
    { anyOf: [{ anyOf: [{ type: 'string' }, { type: 'integer' }] }, { type: 'null' }] },
    { anyOf: [{ type: ['string', 'integer'] }, { type: 'null' }] },
  ]
  for (const schema of left) t.same(nullableForSerializer(schema), schema, `left as it is: ${JSON.stringify(schema)}`)
  const original = JSON.stringify(nested)
  nullableForSerializer(nested)
  t.equal(JSON.stringify(nested), original, 'the route schema itself is not changed (the OpenAPI document is made from it)')
})

t.test('the message schema writes the same JSON both ways', async (t) => {
  const schema = Type.Array(MessageSchema)
  const before = fastJson(schema as object)
  const after = fastJson(nullableForSerializer(schema) as object)
  t.not(JSON.stringify(nullableForSerializer(schema)), JSON.stringify(schema), 'the message schema has nullable fields to rewrite')
  t.notMatch(JSON.stringify(nullableForSerializer(schema)), /"anyOf":\[\{"type":"(string|integer|boolean|number)"[^\]]*\},\{"type":"null"\}\]/, 'no inline nullable anyOf left')
  // A message as the schema makes it (each union's first branch: the typed value), and the same
  // with every nullable property null.
  const properties = (MessageSchema as unknown as { properties: Record<string, { anyOf?: { type?: string }[] }> }).properties
  const nullable = Object.keys(properties).filter((key) => properties[key]!.anyOf?.some((b) => b.type === 'null'))
  const set = sampleOf(MessageSchema as unknown as Schema) as Record<string, unknown>
  // An approval's fields have patterns this sampler does not meet; its serializing with a real
  // approval is checked against the OpenAPI document by the approval tests.
  set.approval = null
  const cleared = { ...set, ...Object.fromEntries(nullable.map((key) => [key, null])) }
  const messages = [set, cleared, { ...set, created_at: new Date('2026-11-27T05:00:00.000Z') }]
  t.ok(nullable.length >= 5, `nullable fields exercised: ${nullable.join(', ')}`)
  t.ok(
    nullable.some((key) => set[key] !== null),
    'and set to values',
  )
  t.equal(after(messages), before(messages), 'the same JSON')
})
