// Every error code the API can answer (the closed list of src/lib/errors.ts) has a sentence in
// the web UI, so a person never sees a raw code; a screen's own sentence wins for its codes.
import t from 'tap'
import { ERROR_CODES } from '../../src/lib/errors.ts'
import { ApiError, SENTENCE_CODES, sentenceFor } from '../../src/web/api/errors.ts'

t.test('each API error code maps to a sentence', async (t) => {
  const missing = Object.keys(ERROR_CODES).filter((code) => !SENTENCE_CODES.includes(code))
  t.same(missing, [], 'codes without a sentence in src/web/api/errors.ts')
  for (const [code, status] of Object.entries(ERROR_CODES)) {
    const sentence = sentenceFor(new ApiError(status, code, 'raw server message'))
    t.match(sentence, /^[A-Z].*\.$/, `${code}: a sentence`)
    t.notMatch(sentence, /raw server message|[A-Z]+_[A-Z]+/, `${code}: neither the server's text nor a code`)
  }
})

t.test('a screen may word a code its own way; unknown codes fall back on the status', async (t) => {
  const conflict = new ApiError(409, 'CONFLICT', 'the webhook is disabled')
  t.equal(sentenceFor(conflict), 'That already exists.')
  t.equal(sentenceFor(conflict, { CONFLICT: 'Turn it back on first.' }), 'Turn it back on first.')
  t.equal(sentenceFor(new ApiError(404, 'SOMETHING_NEW', 'x')), 'That no longer exists, or you do not have access to it.')
  t.equal(sentenceFor(new ApiError(502, 'HTTP_502', 'Bad Gateway')), 'Something went wrong on the server. Try again; if it keeps happening, tell the workspace owner.')
  t.equal(sentenceFor(new TypeError('fetch failed')), 'Cannot reach the server. Check your connection and try again.')
})
