/**
 * trace_printk() messages in trace.dat: the `bprint` and `bputs` events.
 *
 * trace_printk() does not store text. It stores the address of its format
 * string (which trace.dat keeps in its printk formats section, the
 * kernel's `printk_formats` file) and the arguments packed as the kernel's
 * vbin_printf() packs them (lib/vsprintf.c); the text is made when the
 * trace is read. trace_puts() (bputs) stores only the address of a
 * constant string. Kernel developers chasing a stall add exactly these
 * calls, so their messages are rendered here as `trace-cmd report` prints
 * them (tests: other_architectures.test.ts injects such events into a real
 * recording and compares with trace-cmd's own output).
 *
 * Written here rather than taken from a library: no npm package decodes
 * vbin_printf buffers, and the C printf subset involved is small.
 */
import type { Kallsyms } from './kallsyms.ts';

/** The printk formats section: format string by address. */
export class PrintkFormats {
  private constructor(private readonly byAddress: Map<string, string>) {}

  static readonly none = new PrintkFormats(new Map());

  /**
   * Lines `0xffffffff8281a291 : "End context switch"`, the string escaped
   * as the kernel's printk_formats file shows it (\n, \t and \" escaped).
   */
  static parse(text: string | null): PrintkFormats {
    const map = new Map<string, string>();
    for (const line of (text ?? '').split('\n')) {
      const m = /^\s*0x([0-9a-fA-F]+)\s*:\s*"(.*)"\s*$/.exec(line);
      if (!m) continue;
      map.set(
        m[1]!.toLowerCase().replace(/^0+(?=.)/, ''),
        m[2]!.replace(/\\([nt"])/g, (_s, c: string) => (c === 'n' ? '\n' : c === 't' ? '\t' : '"')),
      );
    }
    return new PrintkFormats(map);
  }

  /** The format at a 64-bit address given as 32-bit halves, or null. */
  lookup(hi: number, lo: number): string | null {
    const key = hi === 0 ? lo.toString(16) : hi.toString(16) + lo.toString(16).padStart(8, '0');
    return this.byAddress.get(key) ?? null;
  }

  get size(): number {
    return this.byAddress.size;
  }
}

/** Reads the packed arguments in order, with vbin_printf's alignment. */
class ArgReader {
  pos: number;

  constructor(
    private readonly b: Buffer,
    private readonly start: number,
    private readonly end: number,
    private readonly le: boolean,
  ) {
    this.pos = start;
  }

  /** An integer of `size` bytes; 8-byte values are aligned to 4 (vbin_printf stores them as two u32). */
  int(size: number, signed: boolean): bigint | null {
    const align = size === 8 ? 4 : size;
    this.pos = this.start + Math.ceil((this.pos - this.start) / align) * align;
    if (this.pos + size > this.end) return null;
    const b = this.b;
    const p = this.pos;
    this.pos += size;
    if (size === 1) return BigInt(signed ? b.readInt8(p) : b.readUInt8(p));
    if (size === 2)
      return BigInt(
        signed ? (this.le ? b.readInt16LE(p) : b.readInt16BE(p)) : this.le ? b.readUInt16LE(p) : b.readUInt16BE(p),
      );
    if (size === 4)
      return BigInt(
        signed ? (this.le ? b.readInt32LE(p) : b.readInt32BE(p)) : this.le ? b.readUInt32LE(p) : b.readUInt32BE(p),
      );
    return signed
      ? this.le
        ? b.readBigInt64LE(p)
        : b.readBigInt64BE(p)
      : this.le
        ? b.readBigUInt64LE(p)
        : b.readBigUInt64BE(p);
  }

  /** A NUL-terminated string stored inline (%s, and %p extensions formatted when recorded). */
  str(): string | null {
    if (this.pos >= this.end) return null;
    let e = this.b.indexOf(0, this.pos);
    if (e < 0 || e > this.end) e = this.end;
    const s = this.b.toString('utf8', this.pos, e);
    this.pos = Math.min(e + 1, this.end);
    return s;
  }
}

interface Spec {
  flags: string;
  width: number | null;
  precision: number | null;
}

function pad(s: string, spec: Spec, zeroAllowed: boolean): string {
  const w = spec.width ?? 0;
  if (s.length >= w) return s;
  if (spec.flags.includes('-')) return s + ' '.repeat(w - s.length);
  if (zeroAllowed && spec.flags.includes('0')) {
    const sign = /^[-+ ]|^0[xX]/.exec(s)?.[0] ?? '';
    return sign + '0'.repeat(w - s.length) + s.slice(sign.length);
  }
  return ' '.repeat(w - s.length) + s;
}

function formatInt(v: bigint, conv: string, spec: Spec): string {
  const neg = v < 0n;
  const abs = neg ? -v : v;
  let digits =
    conv === 'x'
      ? abs.toString(16)
      : conv === 'X'
        ? abs.toString(16).toUpperCase()
        : conv === 'o'
          ? abs.toString(8)
          : abs.toString(10);
  if (spec.precision !== null) digits = spec.precision === 0 && abs === 0n ? '' : digits.padStart(spec.precision, '0');
  let prefix = '';
  if (conv === 'd' || conv === 'i')
    prefix = neg ? '-' : spec.flags.includes('+') ? '+' : spec.flags.includes(' ') ? ' ' : '';
  else if (spec.flags.includes('#') && abs !== 0n)
    prefix = conv === 'x' ? '0x' : conv === 'X' ? '0X' : conv === 'o' && !digits.startsWith('0') ? '0' : '';
  return pad(prefix + digits, spec, spec.precision === null);
}

/** Bytes of an integer conversion's argument, by its length modifier. */
function intSize(length: string, longSize: number): number {
  switch (length) {
    case 'hh':
      return 1;
    case 'h':
      return 2;
    case 'l':
    case 'z':
    case 'Z':
    case 't':
      return longSize;
    case 'll':
    case 'L':
    case 'q':
    case 'j':
      return 8;
    default:
      return 4;
  }
}

/**
 * Largest width or precision honoured. The kernel allows up to 2^23 - 1 and
 * 2^15 - 1; a hostile file could ask for that on every event, and a
 * message padded past a few KB says nothing more.
 */
const MAX_WIDTH = 4096;

/** One conversion: %, flags, width, precision, length modifier, conversion (matched at `lastIndex`, no substring per conversion). */
const CONVERSION = /%([-+ #0]*)(\*|\d+)?(?:\.(\*|\d*))?(hh|h|ll|l|L|q|j|z|Z|t)?([diouxXcsp%n])/y;

/** Pointer extensions whose argument stays a pointer in the buffer (vbin_printf); others are stored formatted. */
const POINTER_KEPT = new Set(['S', 's', 'F', 'f', 'x', 'K', 'e']);

/**
 * The message of a bprint record: `fmt` applied to the arguments packed in
 * b[start, end). An argument missing from a short buffer prints as
 * nothing, as far as the buffer goes.
 */
export function renderBprint(
  fmt: string,
  b: Buffer,
  start: number,
  end: number,
  le: boolean,
  longSize: number,
  kallsyms: Kallsyms,
): string {
  const args = new ArgReader(b, start, end, le);
  let out = '';
  for (let i = 0; i < fmt.length;) {
    const pct = fmt.indexOf('%', i);
    if (pct < 0) {
      out += fmt.slice(i);
      break;
    }
    out += fmt.slice(i, pct);
    CONVERSION.lastIndex = pct;
    const m = CONVERSION.exec(fmt);
    if (!m) {
      out += '%';
      i = pct + 1;
      continue;
    }
    i = pct + m[0].length;
    const [, flags = '', widthText, precisionText, length = '', conv] = m;
    if (conv === '%') {
      out += '%';
      continue;
    }
    const starArg = () => {
      const v = args.int(4, true);
      return v === null ? null : Number(v);
    };
    const spec: Spec = {
      flags,
      width: widthText === '*' ? starArg() : widthText !== undefined ? Number(widthText) : null,
      precision: precisionText === undefined ? null : precisionText === '*' ? starArg() : Number(precisionText || '0'),
    };
    if (spec.width !== null && spec.width < 0) {
      spec.flags += '-';
      spec.width = -spec.width;
    }
    if (spec.width !== null) spec.width = Math.min(spec.width, MAX_WIDTH);
    if (spec.precision !== null) spec.precision = spec.precision < 0 ? null : Math.min(spec.precision, MAX_WIDTH);
    switch (conv) {
      case 'n':
        break;
      case 'c': {
        const v = args.int(1, false);
        if (v !== null) out += pad(String.fromCharCode(Number(v)), spec, false);
        break;
      }
      case 's': {
        let s = args.str();
        if (s === null) break;
        if (spec.precision !== null) s = s.slice(0, spec.precision);
        out += pad(s, spec, false);
        break;
      }
      case 'p': {
        let ext = '';
        while (i < fmt.length && /[A-Za-z0-9]/.test(fmt[i]!)) ext += fmt[i++];
        const kind = ext[0] ?? '';
        if (kind !== '' && !POINTER_KEPT.has(kind)) {
          const s = args.str(); // formatted by the kernel when recorded
          if (s !== null) out += pad(s, spec, false);
          break;
        }
        const v = args.int(longSize, false);
        if (v === null) break;
        const hi = Number(v >> 32n);
        const lo = Number(v & 0xffffffffn);
        const sym =
          kind === 's' || kind === 'f'
            ? kallsyms.lookup(hi, lo)
            : kind === 'S' || kind === 'F'
              ? kallsyms.lookupWithOffset(hi, lo)
              : null;
        out += pad(sym ?? '0x' + v.toString(16), spec, false);
        break;
      }
      default: {
        const signed = conv === 'd' || conv === 'i';
        const v = args.int(intSize(length, longSize), signed);
        if (v !== null) out += formatInt(v, conv!, spec);
      }
    }
  }
  return out;
}
