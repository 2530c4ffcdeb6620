/**
 * Syscall events (system `syscalls`: sys_enter_NAME / sys_exit_NAME). Their
 * text is not key=value:
 *
 *   trace-cmd report   sys_enter_openat: dfd: 0xffffff9c, filename: 0x7fa5689f3140, flags: 0x00080000, mode: 0x00000000
 *                      sys_exit_openat: 0x3
 *   the kernel's text  sys_openat(dfd: 0xffffff9c, filename: 0x7fa5689f3140, flags: 0x80000, mode: 0x0)
 *                      sys_openat -> 0x3
 *
 * (parse_event_line.ts reads the kernel's form to the event name and the
 * text between the parentheses or after the arrow.) Every argument is the
 * syscall's unsigned long, printed in hex or decimal: it reads as that
 * integer, as trace.dat's record gives it; the return value is a signed
 * long (0xfffffffffffffffe is -2, -ENOENT).
 */
import { type EventFields, type FieldValue, setField } from '../../decoded_event.ts';
import { parseGeneric } from './generic.ts';

const TWO_53 = 2 ** 53;

/** An unsigned integer printed in hex (0x...) or decimal; null if it is not one. */
function unsignedOf(t: string): number | bigint | null {
  const hex = t.startsWith('0x');
  if (!(hex ? /^0x[0-9a-fA-F]{1,16}$/ : /^[0-9]{1,20}$/).test(t)) return null;
  const n = hex ? parseInt(t.slice(2), 16) : Number(t);
  if (n < TWO_53) return n;
  const big = BigInt(t);
  return big < 1n << 64n ? big : null;
}

/**
 * sys_enter_*: `name: value, name: value, ...` (no arguments: empty text).
 * A few syscalls have print formats of their own (futex: `op=FUTEX_WAKE|...
 * uaddr=0x...`): those read as key=value text, as any other event.
 */
export function parseSyscallEnter(args: string): EventFields | null {
  const fields: EventFields = {};
  if (args.trim() === '') return fields;
  for (const part of args.split(', ')) {
    const colon = part.indexOf(': ');
    if (colon <= 0) return parseGeneric(args);
    const printed = part.slice(colon + 2).trim();
    setField(fields, part.slice(0, colon).trim(), unsignedOf(printed) ?? printed);
  }
  return fields;
}

/** sys_exit_*: the return value, as a signed long. */
export function parseSyscallExit(args: string): EventFields | null {
  const v = unsignedOf(args.trim());
  if (v === null) return null;
  // Below 2^53 a number, and positive; from there a bigint, negative from 2^63.
  const ret: FieldValue = typeof v === 'bigint' ? toSigned(v) : v;
  return { ret };
}

function toSigned(v: bigint): number | bigint {
  const s = BigInt.asIntN(64, v);
  return s >= -BigInt(TWO_53) && s < BigInt(TWO_53) ? Number(s) : s;
}
