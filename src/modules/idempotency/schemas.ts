// The Idempotency-Key request header of the creates (channels, DMs, integration posts).
import { Type } from 'typebox'
import { IDEMPOTENCY_HEADER } from './service.ts'

export const IdempotencyHeaders = Type.Object(
  {
    [IDEMPOTENCY_HEADER]: Type.Optional(
      Type.String({ minLength: 1, maxLength: 255, description: 'A retry with the same key and body within 24 h returns the original response; another body: 409 `IDEMPOTENCY_KEY_REUSED`.' }),
    ),
  },
  { additionalProperties: true },
)
