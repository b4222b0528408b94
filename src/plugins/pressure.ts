// Load shedding with @fastify/under-pressure: while the event loop lags (mean delay over the last
// second) or the V8 heap is nearly full, requests are refused at once with
// 503 {error, code: 'SERVICE_UNAVAILABLE'} and Retry-After, instead of queueing until they time
// out. /health (liveness) and /metrics keep answering, so an operator can see what is going on.
import { getHeapStatistics } from 'node:v8'
import underPressure from '@fastify/under-pressure'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { AppError } from '../lib/errors.ts'

const EXEMPT = new Set(['/health', '/metrics'])

async function pressurePlugin(app: FastifyInstance): Promise<void> {
  const { config } = app
  const maxHeap = config.pressureMaxHeapUsedBytes ?? Math.floor(getHeapStatistics().heap_size_limit * 0.9)
  const retryAfter = String(config.pressureRetryAfterSeconds)
  await app.register(underPressure, {
    // 0 turns a check off in under-pressure too.
    maxEventLoopDelay: config.pressureMaxEventLoopDelayMs,
    maxHeapUsedBytes: maxHeap,
    sampleInterval: 1_000,
    pressureHandler: async (request, _reply, type, value) => {
      if (EXEMPT.has(request.url.split('?')[0] ?? '')) return
      // No delay sample in the last interval means one block longer than it (a big synchronous
      // job), which under-pressure reports as an infinite delay: not sustained load, let it pass.
      if (type === underPressure.TYPE_EVENT_LOOP_DELAY && !Number.isFinite(value)) return
      request.log.warn({ pressure: type }, 'shedding load')
      throw new AppError('SERVICE_UNAVAILABLE', 'the server is overloaded; retry later', { headers: { 'retry-after': retryAfter } })
    },
  })
}

export default fp(pressurePlugin, { name: 'pressure' })
