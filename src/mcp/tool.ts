// One MCP tool is one declaration: `defineTool({ name, title, description, input, output,
// annotations, run })`. The input and output schemas are TypeBox (plain JSON Schema, like every
// other contract of the service); from them this file derives what `tools/list` shows and what
// `tools/call` does before and after the handler: defaults filled in, arguments checked (a bad one
// is a VALIDATION_ERROR tool result, nothing runs), failures turned into tool errors carrying the
// REST error code. The same declaration serves both protocol revisions (src/mcp/server.ts).
import type { FastifyInstance } from 'fastify'
import { Type, type Static, type TObject, type TOptional, type TSchema } from 'typebox'
import Value from 'typebox/value'
import { AppError, badRequest } from '../lib/errors.ts'
import { MessageSchema } from '../schemas/message.ts'
import type { MemberPrincipal } from '../modules/identity/principal.ts'
import { toAppError } from '../plugins/errors.ts'
import type { Inbox } from './inbox.ts'

export interface ToolContext {
  app: FastifyInstance
  principal: MemberPrincipal
  inbox: Inbox
  /** The request was cancelled, the session closed or the credential was revoked. */
  signals: AbortSignal[]
  /** Whether the caller's credential is still valid (revoked keys end long waits). */
  stillValid: () => Promise<boolean>
}

export interface ToolAnnotations {
  readOnlyHint?: boolean
  destructiveHint?: boolean
  idempotentHint?: boolean
  openWorldHint?: boolean
}

/** What a handler answers: compact text for the model, and the same data for programs. */
export interface ToolOutput<T> {
  text: string
  structured: T
}

declare const DEFAULTED: unique symbol
/** An argument a client may leave out: the server fills in its default before the handler runs. */
export type TDefaulted<T extends TSchema> = TOptional<T> & { readonly [DEFAULTED]: true }

export function defaulted<T extends TSchema>(schema: T, value: Static<T>): TDefaulted<T> {
  const withDefault: T = { ...schema, default: value }
  return Type.Optional(withDefault) as TDefaulted<T>
}

type DefaultedKeys<P> = { [K in keyof P]: P[K] extends { readonly [DEFAULTED]: true } ? K : never }[keyof P]

/** The arguments a handler receives: the input schema's, with every defaulted one present. */
export type ToolArgs<I extends TObject> = Static<I> & { [K in DefaultedKeys<I['properties']> & keyof Static<I>]-?: Exclude<Static<I>[K], undefined> }

export interface ToolDeclaration<I extends TObject, O extends TSchema> {
  name: string
  title: string
  description: string
  input: I
  /** The `structuredContent` of a successful call (an object; a failure is `{error, code}`). */
  output: O
  annotations: ToolAnnotations
  run: (ctx: ToolContext, args: ToolArgs<I>) => Promise<ToolOutput<Static<O>>>
}

/** A JSON-RPC CallToolResult, as both protocol revisions carry it. */
export interface ToolCallResult {
  [key: string]: unknown
  content: { type: 'text'; text: string }[]
  structuredContent: Record<string, unknown>
  isError?: true
}

export interface Tool {
  name: string
  /** The entry of `tools/list`. */
  listing: {
    name: string
    title: string
    description: string
    inputSchema: { type: 'object'; [key: string]: unknown }
    outputSchema: { type: 'object'; [key: string]: unknown }
    annotations: ToolAnnotations & { title: string }
  }
  call: (ctx: ToolContext, args: unknown) => Promise<ToolCallResult>
}

/** An MCP answer may cut a long message text (src/mcp/format.ts) and says so. */
const McpMessageSchema = Type.Object(
  {
    ...MessageSchema.properties,
    text_truncated: Type.Optional(Type.Literal(true, { description: 'Present when `text` was cut to 8,000 characters in this answer; the message itself is intact (read it over REST).' })),
  },
  { additionalProperties: false, description: 'A message, as the REST API returns it.' },
)

/** Shapes written once in an output schema under `$defs` and referred to wherever they occur. */
const SHARED_DEFINITIONS = new Map<object, { name: string; schema: TSchema }>([[MessageSchema, { name: 'Message', schema: McpMessageSchema }]])

const ToolErrorSchema = {
  type: 'object',
  properties: {
    error: { type: 'string', description: 'What went wrong, for people.' },
    code: { type: 'string', description: 'The REST error code (docs/errors.md), e.g. NOT_FOUND, FORBIDDEN, VALIDATION_ERROR.' },
  },
  required: ['error', 'code'],
  additionalProperties: false,
  description: 'A failed call (`isError: true`).',
}

/** Plain JSON of a TypeBox schema, with the shared shapes moved to `$defs`. */
function plainJson(schema: unknown, used: Map<string, unknown>): unknown {
  if (Array.isArray(schema)) return schema.map((item) => plainJson(item, used))
  if (schema === null || typeof schema !== 'object') return schema
  const shared = SHARED_DEFINITIONS.get(schema)
  if (shared) {
    if (!used.has(shared.name)) used.set(shared.name, plainJson(shared.schema, used))
    return { $ref: `#/$defs/${shared.name}` }
  }
  return Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, plainJson(value, used)]))
}

/**
 * The advertised output schema: the success shape or the `{error, code}` of a failed call (so every
 * `structuredContent` the tool sends conforms, as 2025-era clients check even on errors), with a
 * root `type: object` as the 2025-11-25 revision requires.
 */
function outputSchemaOf(output: TSchema): Tool['listing']['outputSchema'] {
  const defs = new Map<string, unknown>()
  const success = plainJson(output, defs) as { anyOf?: unknown[] }
  const branches = success.anyOf && Object.keys(success).length <= 2 ? success.anyOf : [success]
  return { type: 'object', anyOf: [...branches, ToolErrorSchema], ...definitions(defs) }
}

function inputSchemaOf(input: TObject): Tool['listing']['inputSchema'] {
  const defs = new Map<string, unknown>()
  return { ...(plainJson(input, defs) as Tool['listing']['inputSchema']), ...definitions(defs) }
}

const definitions = (defs: Map<string, unknown>): { $defs?: Record<string, unknown> } => (defs.size ? { $defs: Object.fromEntries(defs) } : {})

function validationMessage(schema: TSchema, value: unknown): string {
  const errors = Value.Errors(schema, value)
  const unknown = errors.find((e) => e.keyword === 'additionalProperties')
  if (unknown) {
    const names = (unknown.params as { additionalProperties?: string[] }).additionalProperties ?? []
    const where = unknown.instancePath ? ` in '${unknown.instancePath.replace(/^\//, '').replaceAll('/', '.')}'` : ''
    return `unknown argument '${names.join("', '")}'${where}`
  }
  const first = errors[0]
  if (!first) return 'invalid arguments'
  if (first.keyword === 'required') return `missing argument '${((first.params as { requiredProperties?: string[] }).requiredProperties ?? []).join("', '")}'`
  const field = first.instancePath.replace(/^\//, '').replaceAll('/', '.')
  return `invalid argument${field ? ` '${field}'` : ''}: ${first.message}`
}

/** A failure as a tool result: the REST error's code and message. */
export function toolError(error: AppError): ToolCallResult {
  return { isError: true, content: [{ type: 'text', text: `${error.code}: ${error.message}` }], structuredContent: { error: error.message, code: error.code } }
}

/** The REST error of a failure: AppErrors as they are, anything else as a logged INTERNAL_ERROR. */
export function asAppError(app: FastifyInstance, error: unknown): AppError {
  const known = toAppError(error)
  if (known) return known
  app.log.error({ err: error }, 'MCP request failed')
  return new AppError('INTERNAL_ERROR', 'internal server error')
}

export function defineTool<I extends TObject, O extends TSchema>(declaration: ToolDeclaration<I, O>): Tool {
  const { name, title, description, input, output, annotations, run } = declaration
  return {
    name,
    listing: {
      name,
      title,
      description,
      inputSchema: inputSchemaOf(input),
      outputSchema: outputSchemaOf(output),
      annotations: { title, ...annotations },
    },
    async call(ctx, raw) {
      const args: unknown = Value.Default(input, structuredClone(raw ?? {}))
      if (!Value.Check(input, args)) return toolError(badRequest(validationMessage(input, args)))
      try {
        const result = await run(ctx, args as ToolArgs<I>)
        return { content: [{ type: 'text', text: result.text }], structuredContent: result.structured }
      } catch (error) {
        return toolError(asAppError(ctx.app, error))
      }
    },
  }
}
