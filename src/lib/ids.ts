// UUIDv7 (RFC 9562): 48-bit Unix milliseconds, then randomness. Within one process the ids are
// strictly increasing (a 12-bit counter in rand_a within the same millisecond), so message ids
// sort in posting order and serve as pagination cursors.
import { randomBytes } from 'node:crypto'

let lastMs = 0
let counter = 0

// Random bytes are drawn 4 KiB at a time: one call per id costs more than the rest of the id.
const POOL_SIZE = 4096
let pool = randomBytes(POOL_SIZE)
let offset = 0

function random(n: number): Buffer {
  if (offset + n > POOL_SIZE) {
    pool = randomBytes(POOL_SIZE)
    offset = 0
  }
  const out = Buffer.from(pool.subarray(offset, offset + n))
  offset += n
  return out
}

export function uuidv7(now = Date.now()): string {
  if (now > lastMs) {
    lastMs = now
    counter = random(2).readUInt16BE(0) & 0x1ff // leave headroom before the 12-bit counter wraps
  } else {
    counter++
    if (counter > 0xfff) {
      lastMs++ // borrow the next millisecond rather than repeat or reorder
      counter = 0
    }
  }
  const bytes = random(16)
  const ms = lastMs
  bytes[0] = Math.floor(ms / 2 ** 40) & 0xff
  bytes[1] = Math.floor(ms / 2 ** 32) & 0xff
  bytes[2] = (ms >>> 24) & 0xff
  bytes[3] = (ms >>> 16) & 0xff
  bytes[4] = (ms >>> 8) & 0xff
  bytes[5] = ms & 0xff
  bytes[6] = 0x70 | ((counter >>> 8) & 0x0f)
  bytes[7] = counter & 0xff
  bytes[8] = 0x80 | (bytes[8]! & 0x3f)
  const hex = bytes.toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

/** The time a UUIDv7 carries (its first 48 bits: milliseconds since the epoch). */
export function uuidv7Time(id: string): Date {
  return new Date(parseInt(id.slice(0, 8) + id.slice(9, 13), 16))
}
