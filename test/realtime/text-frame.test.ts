// The hub's ready-made WebSocket frames (src/realtime/connection.ts, textFrame) are byte for byte
// what ws itself would send for the same payload, at every length encoding of RFC 6455 §5.2
// (7-bit, 16-bit and 64-bit lengths), and built once per payload.
import t from 'tap'
import * as ws from 'ws'
import { textFrame } from '../../src/realtime/connection.ts'

// ws's ES module exports its Sender (the framing it uses itself); @types/ws does not declare it.
const { Sender } = ws as unknown as { Sender: { frame(data: Buffer, options: Record<string, unknown>): Buffer[] } }

t.test('textFrame equals ws framing at every length encoding', async (t) => {
  for (const length of [0, 1, 125, 126, 127, 65_535, 65_536, 70_000]) {
    const payload = Buffer.alloc(length, 'x')
    const expected = Buffer.concat(Sender.frame(payload, { fin: true, opcode: 1, mask: false, readOnly: false, rsv1: false }))
    t.same(textFrame(payload), expected, `${length} bytes`)
  }
})

t.test('one frame per payload, however many sockets it goes to', async (t) => {
  const payload = Buffer.from('{"type":"new_message"}')
  t.equal(textFrame(payload), textFrame(payload), 'the same buffer')
  t.not(textFrame(Buffer.from('{"type":"new_message"}')), textFrame(payload), 'another payload gets its own')
})
