/**
 * Whether bytes start like a Perfetto trace: a Trace message, i.e. `packet`
 * fields (tag 0x0a, a length) whose contents walk as valid protobuf. A
 * Perfetto trace has no magic number, so the check is structural: every
 * packet that lies wholly in the window must parse to its end with valid
 * wire types, and the window must hold at least one packet or be the
 * prefix of one. Text fails it at once (`#` and most letters make group or
 * invalid wire types); sniff.ts also gives text precedence.
 */
import { ProtoError, ProtoReader, WIRE_FIXED32, WIRE_FIXED64, WIRE_LEN, WIRE_VARINT } from './proto_reader.ts';

/** Field numbers past this are not Perfetto's (its largest TracePacket field is below 1000, FtraceEvent's generic ids below 2^17). */
const MAX_FIELD = 1 << 20;

function validMessage(buf: Uint8Array, start: number, end: number, depth: number): boolean {
  const r = new ProtoReader(buf, start, end);
  try {
    while (r.next()) {
      if (r.field > MAX_FIELD) return false;
      const w = r.wire;
      if (w !== WIRE_VARINT && w !== WIRE_FIXED64 && w !== WIRE_LEN && w !== WIRE_FIXED32) return false;
      r.skip();
    }
    return r.pos === end && depth >= 0;
  } catch (e) {
    if (e instanceof ProtoError) return false;
    throw e;
  }
}

export function looksLikePerfetto(bytes: Uint8Array): boolean {
  if (bytes.length < 2 || bytes[0] !== 0x0a) return false;
  const r = new ProtoReader(bytes, 0, bytes.length);
  let packets = 0;
  try {
    while (r.pos < bytes.length) {
      r.next();
      if (r.field !== 1 || r.wire !== WIRE_LEN) return false;
      const len = r.varint();
      const start = r.pos;
      if (len === 0) return false;
      if (start + len > bytes.length) {
        // The window ends inside this packet: its complete fields must be valid.
        return packets > 0 || prefixValid(bytes, start, bytes.length);
      }
      if (!validMessage(bytes, start, start + len, 0)) return false;
      packets++;
      r.pos = start + len;
    }
  } catch (e) {
    if (e instanceof ProtoError) return packets > 0;
    throw e;
  }
  return packets > 0;
}

/** The complete fields of a message cut by the window are valid (at least one). */
function prefixValid(buf: Uint8Array, start: number, end: number): boolean {
  const r = new ProtoReader(buf, start, end);
  let fields = 0;
  try {
    while (r.next()) {
      if (r.field > MAX_FIELD) return false;
      const w = r.wire;
      if (w !== WIRE_VARINT && w !== WIRE_FIXED64 && w !== WIRE_LEN && w !== WIRE_FIXED32) return false;
      r.skip();
      fields++;
    }
  } catch (e) {
    if (!(e instanceof ProtoError)) throw e;
  }
  return fields > 0;
}
