// Channels (/api/v1/channels) and their members. Who may do what: docs/access.md.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { MemberPrincipal } from '../identity/principal.ts'
import { errors, IdParams } from '../../schemas/common.ts'
import { IdempotencyHeaders } from '../idempotency/schemas.ts'
import { idempotencyKeyOf } from '../idempotency/service.ts'
import {
  AddedMemberSchema,
  AddMemberBody,
  BrowseQuery,
  ChannelListSchema,
  ChannelSchema,
  CreateChannelBody,
  MemberListSchema,
  MarkReadBody,
  MemberParams,
  PublicChannelListSchema,
  ReadStateSchema,
  UpdateChannelBody,
  type ChannelDto,
  type ChannelListItemDto,
} from './schemas.ts'
import * as channels from './service.ts'

const NoContent = Type.Null({ description: 'Done; no body.' })
const member = (request: FastifyRequest): MemberPrincipal => request.principal as MemberPrincipal

export default async function channelsRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()

  app.post(
    '/channels',
    {
      config: { auth: 'any' },
      schema: {
        operationId: 'createChannel',
        tags: ['channels'],
        summary: 'Create a channel (the creator becomes its first member)',
        description: 'Observers: 403. A name another channel has, ignoring case: 409 `NAME_TAKEN`. Emits `channel.created` and `member.joined`.',
        headers: IdempotencyHeaders,
        body: CreateChannelBody,
        response: { 201: ChannelSchema, ...errors(400, 403, 409) },
      },
    },
    async (request, reply) => {
      const result = await channels.createChannel(fastify.ctx, member(request), request.body, idempotencyKeyOf(request))
      return reply.code(result.statusCode as 201).send(result.body as ChannelDto)
    },
  )

  app.get(
    '/channels',
    {
      config: { auth: 'any' },
      schema: {
        operationId: 'listChannels',
        tags: ['channels'],
        summary: 'The channels and DMs the caller belongs to',
        description: 'A plain array of `{id, name, type, description}`. The workspace owner also gets every regular channel (not the DMs of others).',
        response: { 200: ChannelListSchema },
      },
    },
    async (request, reply) => {
      // The JSON text PostgreSQL built to the schema (repo.sidebarJson): with its content type
      // set, Fastify sends a string as it is. The schema still documents the response (OpenAPI,
      // SDK), and the tests check every response against it.
      const body = await channels.listChannelsJson(fastify.ctx, member(request))
      return reply.type('application/json; charset=utf-8').send(body as unknown as ChannelListItemDto[])
    },
  )

  app.put(
    '/channels/:id/read',
    {
      config: { auth: 'any' },
      schema: {
        operationId: 'markChannelRead',
        tags: ['channels'],
        summary: "Move the caller's read marker (unread counts)",
        description:
          'Everything up to `message_id` counts as read for the caller, on every device. The marker only moves forward: an older id leaves it where it is. Answers the marker and the unread count after it. For a person (not an agent), the mentions and DM messages up to the marker leave their inbox (`GET /api/v1/inbox`), which is how the web UI’s mentions badge clears. Members only: the workspace owner reading a channel it has not joined gets 403; a message of another channel gets 404.',
        params: IdParams,
        body: MarkReadBody,
        response: { 200: ReadStateSchema, ...errors(400, 403, 404) },
      },
    },
    async (request) => channels.markRead(fastify.ctx, member(request), request.params.id, request.body.message_id),
  )

  app.get(
    '/channels/:id',
    {
      config: { auth: 'any' },
      schema: {
        operationId: 'getChannel',
        tags: ['channels'],
        summary: 'Get a channel',
        description: 'Members (and the workspace owner for regular channels) only; anyone else gets 404, as for an unknown id.',
        params: IdParams,
        response: { 200: ChannelSchema, ...errors(400, 404) },
      },
    },
    async (request) => channels.getChannel(fastify.ctx, member(request), request.params.id),
  )

  app.patch(
    '/channels/:id',
    {
      config: { auth: 'any' },
      schema: {
        operationId: 'updateChannel',
        tags: ['channels'],
        summary: 'Rename or describe a channel (its creator or an admin)',
        description: 'Partial update of `name`, `description`, `topic` (`null` clears the topic). DMs cannot be changed (403). Emits `channel.updated`.',
        params: IdParams,
        body: UpdateChannelBody,
        response: { 200: ChannelSchema, ...errors(400, 403, 404, 409) },
      },
    },
    async (request) => channels.updateChannel(fastify.ctx, member(request), request.params.id, request.body),
  )

  app.delete(
    '/channels/:id',
    {
      config: { auth: 'any' },
      schema: {
        operationId: 'deleteChannel',
        tags: ['channels'],
        summary: 'Delete a channel with all its messages and files (its creator or an admin)',
        description: 'DMs cannot be deleted (403). Emits `channel.deleted` to the former members.',
        params: IdParams,
        response: { 204: NoContent, ...errors(400, 403, 404) },
      },
    },
    async (request, reply) => {
      await channels.deleteChannel(fastify.ctx, member(request), request.params.id)
      return reply.code(204).send(null)
    },
  )

  app.get(
    '/channels/:id/members',
    {
      config: { auth: 'any' },
      schema: {
        operationId: 'listChannelMembers',
        tags: ['channels'],
        summary: "List a channel's members",
        params: IdParams,
        response: { 200: MemberListSchema, ...errors(400, 404) },
      },
    },
    async (request) => channels.listMembers(fastify.ctx, member(request), request.params.id),
  )

  app.post(
    '/channels/:id/members',
    {
      config: { auth: 'any' },
      schema: {
        operationId: 'addChannelMember',
        tags: ['channels'],
        summary: 'Add a user or an agent to a channel',
        description:
          'Any member except observers, or an admin, may add. `user_id` is a user or an agent id; unknown: 404. Already a member: 409 `ALREADY_MEMBER`. DMs keep their two participants (403). Emits `member.joined`.',
        params: IdParams,
        body: AddMemberBody,
        response: { 201: AddedMemberSchema, ...errors(400, 403, 404, 409) },
      },
    },
    async (request, reply) => reply.code(201).send(await channels.addMember(fastify.ctx, member(request), request.params.id, request.body.user_id)),
  )

  app.get(
    '/channels/browse',
    {
      config: { auth: 'any' },
      schema: {
        operationId: 'browseChannels',
        tags: ['channels'],
        summary: 'The channel browser: every public channel, joined or not',
        description:
          'Any human or agent of the workspace. Public channels only (`private: false`); private channels and DMs are never listed, to anyone (the owner finds the private ones in GET /api/v1/channels). `q` filters by name. Join one with POST /api/v1/channels/{id}/join.',
        querystring: BrowseQuery,
        response: { 200: PublicChannelListSchema, ...errors(400) },
      },
    },
    async (request) => channels.browseChannels(fastify.ctx, member(request), request.query.q),
  )

  app.post(
    '/channels/:id/join',
    {
      config: { auth: 'any' },
      schema: {
        operationId: 'joinChannel',
        tags: ['channels'],
        summary: 'Join a public channel',
        description:
          'The caller becomes a member (observers too: they read, and still cannot post). A private channel, a DM or an unknown id: 404 (private channels are joined only when a member adds you; the workspace owner may join any regular channel). Already a member: 409 `ALREADY_MEMBER`. Emits `member.joined`.',
        params: IdParams,
        response: { 201: AddedMemberSchema, ...errors(400, 404, 409) },
      },
    },
    async (request, reply) => reply.code(201).send(await channels.joinChannel(fastify.ctx, member(request), request.params.id)),
  )

  app.delete(
    '/channels/:id/members/:user_id',
    {
      config: { auth: 'any' },
      schema: {
        operationId: 'removeChannelMember',
        tags: ['channels'],
        summary: 'Remove a member, or leave',
        description:
          'Anyone may remove themselves; removing someone else takes the channel creator or an admin. Access ends at once (REST and realtime). DMs keep their two participants (403). Emits `member.left`.',
        params: MemberParams,
        response: { 204: NoContent, ...errors(400, 403, 404) },
      },
    },
    async (request, reply) => {
      await channels.removeMember(fastify.ctx, member(request), request.params.id, request.params.user_id)
      return reply.code(204).send(null)
    },
  )
}
