// Every HTTP input passes src/lib/input-guard.ts once, right after parsing and before schema
// validation or any handler: the JSON or form body, the query string and the path parameters.
// Multipart parts are read by their route as a stream and checked there; WebSocket frames by the
// gateway.
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { assertStorable } from '../lib/input-guard.ts'

async function inputGuardPlugin(app: FastifyInstance): Promise<void> {
  app.addHook('preValidation', (request, _reply, done) => {
    try {
      assertStorable(request.params, 'path parameter ')
      assertStorable(request.query, 'query parameter ')
      assertStorable(request.body, 'body ')
    } catch (error) {
      return done(error as Error)
    }
    done()
  })
}

export default fp(inputGuardPlugin, { name: 'input-guard' })
