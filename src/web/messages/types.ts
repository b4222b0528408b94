import type { components, paths } from '../../sdk/schema'

export type Message = components['schemas']['Message']
export type MessagePage = paths['/api/v1/channels/{id}/messages']['get']['responses'][200]['content']['application/json']
