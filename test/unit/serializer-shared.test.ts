// The shared schemas the serializer hands fast-json-stringify for one route (sharedSchemasFor in
// src/lib/serializer-compiler.ts): those the route refers to and theirs in turn, never one it
// needs less; the whole set when a reference names none of them. With the real components, every
// one writes the same JSON given only what it needs as given all forty.
import t from 'tap'
import fastJson, { type Schema as JsonSchema } from 'fast-json-stringify'
import { nullableForSerializer, sharedSchemasFor } from '../../src/lib/serializer-compiler.ts'
import { SHARED_SCHEMAS } from '../../src/schemas/common.ts'
import { COMPONENT_SCHEMAS } from '../../src/schemas/components.ts'
import { sampleOf } from '../support/schema-sample.ts'

const obj = (properties: Record<string, unknown>): Record<string, unknown> => ({ type: 'object', properties })

t.test('the references, followed through the shared schemas', async (t) => {
  const shared = {
    Leaf: { $id: 'Leaf', type: 'string' },
    Middle: { $id: 'Middle', ...obj({ leaf: { $ref: 'Leaf#' } }) },
    Top: { $id: 'Top', ...obj({ middle: { $ref: 'Middle' }, items: { type: 'array', items: { $ref: 'Leaf#/type' } } }) },
    Loop: { $id: 'Loop', ...obj({ next: { anyOf: [{ $ref: 'Loop#' }, { type: 'null' }] } }) },
    Unused: { $id: 'Unused', type: 'integer' },
  }
  t.same(Object.keys(sharedSchemasFor(obj({ a: { type: 'string' } }), shared)), [], 'no reference: none')
  t.same(Object.keys(sharedSchemasFor(obj({ a: { $ref: 'Leaf#' } }), shared)).sort(), ['Leaf'])
  t.same(Object.keys(sharedSchemasFor({ type: 'array', items: { $ref: 'Top#' } }, shared)).sort(), ['Leaf', 'Middle', 'Top'], 'what Top needs, through Middle')
  t.same(Object.keys(sharedSchemasFor(obj({ a: { $ref: 'Loop#' } }), shared)), ['Loop'], 'a schema that refers to itself ends')
  t.equal(sharedSchemasFor(obj({ a: { $ref: 'Elsewhere#' } }), shared), shared, 'a reference to none of them: all of them')
  t.equal(sharedSchemasFor(obj({ a: { $ref: '#/definitions/x' } }), shared), shared, 'a local reference: all of them')
  t.same(Object.keys(sharedSchemasFor(obj({ $ref: { type: 'string' } }), shared)), [], 'a property named $ref is not a reference')
})

t.test('every component writes the same JSON with what it needs as with all of them', async (t) => {
  const all = Object.fromEntries([...SHARED_SCHEMAS, ...COMPONENT_SCHEMAS].map((s) => [(s as { $id: string }).$id, nullableForSerializer(s)])) as Record<string, JsonSchema>
  const routeOf = (id: string): JsonSchema => ({ type: 'array', items: { $ref: `${id}#` } })
  // With all forty, one compile: every component as a property of one object (a compile with all
  // forty costs a quarter of a second here, for each route).
  const withAll = fastJson({ type: 'object', properties: Object.fromEntries(COMPONENT_SCHEMAS.map(({ $id }) => [$id, routeOf($id)])) }, { schema: all })
  let referring = 0
  let wrote = 0
  for (const { $id: id } of COMPONENT_SCHEMAS) {
    const needed = sharedSchemasFor(routeOf(id), all) as Record<string, JsonSchema>
    t.ok(id in needed && Object.keys(needed).length < Object.keys(all).length, `${id}: ${Object.keys(needed).length} of ${Object.keys(all).length}`)
    if (Object.keys(needed).length > 1) referring++
    // A union whose branches the sample does not satisfy (a pattern) throws: then both must throw alike.
    const value = [sampleOf({ $ref: id }, all)]
    const write = (stringify: () => string): string => {
      try {
        return stringify()
      } catch (error) {
        return `threw ${(error as Error).message}`
      }
    }
    const written = write(() => fastJson(routeOf(id), { schema: needed })(value))
    const expected = write(() =>
      withAll({ [id]: value })
        .replace(`{"${id}":`, '')
        .slice(0, -1),
    )
    t.equal(written, expected, `${id}: the same JSON`)
    if (!written.startsWith('threw')) wrote++
  }
  t.ok(referring >= 5, `components that refer to others are among them (${referring})`)
  t.ok(wrote >= COMPONENT_SCHEMAS.length - 3, `${wrote} of ${COMPONENT_SCHEMAS.length} samples written, not thrown`)
})
