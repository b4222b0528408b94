// The test kit: one implementation of the helpers every test area uses. Import from here
// (`../support/index.ts`); topic-specific helpers stay next to their tests.
export { build, testConfig, TEST_JWT_SECRET, TEST_REDIS_URL, type BuildTestOptions, type TestApp } from '../helper.ts'
export { bearer, expectStatus, type Api } from './http.ts'
export { addMember, createChannel, createChannelId, post, removeMember, type CreateChannelOptions } from './conversations.ts'
export { CURSOR_RE, ISO_RE, MISSING, UUID_RE } from './ids.ts'
export type { Channel, MemberAdded, Message } from './types.ts'
export { disableLoopGuard, FIXTURE_PASSWORD, FIXTURE_PASSWORD_HASH, seedWorkspace, type SeededAgent, type SeededHuman, type Workspace } from './workspace.ts'
export { MESSAGE_KEYS, messageDto } from './messages.ts'
export { untilPlanned } from './planning.ts'
export { eventually, SAFETY_MS } from './wait.ts'
