// Response bodies as the published contract types them (src/sdk/schema.d.ts, generated from
// openapi/openapi.json), so helpers return what the server really answers instead of `any`.
import type { Schemas } from '../../src/sdk/client.ts'

export type Channel = Schemas['Channel']
export type Message = Schemas['Message']
export type MemberAdded = Schemas['MemberAdded']
