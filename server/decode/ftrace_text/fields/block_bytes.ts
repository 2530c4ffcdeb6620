/**
 * The block layer's positional texts (block.ts: `254,0 RA () 65994752 + 8192
 * 0x2,0,4 [0]`) read from their bytes into per-field kinds and spans, for
 * the field worker to write straight into the event's shape row, as
 * untyped_kv.ts does for key=value texts.
 *
 * Why: block events have no typed table, so each took the general path: a
 * string, block.ts's regex, a fields object, held for continuation lines,
 * then UntypedRows.shapeFor walking the object's keys. On many_systems' text
 * (29% block events) that was ~15% of the field worker, the critical thread
 * of that ingest.
 *
 * It only takes text whose reading by block.ts's regexes is obvious from the
 * bytes: printable ASCII, each bracket or parenthesis the layout has exactly
 * once (so the regexes' greedy `(.*)` cannot end elsewhere), numbers of at
 * most 15 digits (safe integers; block.ts's num() gives a bigint past 2^53,
 * and an unmapped buffer's sector of 2^64 - 1 fits no shape). Anything else
 * is left to block.ts through the general path, the definition.
 */
import { PRINTED_PARSERS } from './index.ts';
import {
  parseBlockBio,
  parseBlockBuffer,
  parseBlockPlug,
  parseBlockRq,
  parseBlockRqComplete,
  parseBlockSplit,
  parseBlockUnplug,
} from './block.ts';
import { KV_HEX, KV_INT, KV_STR, type KvSeqInfo, type ScannedFields } from './untyped_kv.ts';
import { asciiBytes, sameBytesBefore } from './byte_keys.ts';

/** Which of block.ts's regexes the event's text is printed by. */
const RQ = 0; // block_rq_insert, _issue, _merge, block_io_start, _done
const RQ_COMPLETE = 1; // block_rq_complete, _requeue, _error
const BIO = 2;
const SPLIT = 3;
const BUFFER = 4;
const PLUG = 5;
const UNPLUG = 6;

const LAYOUT_OF = new Map<unknown, number>([
  [parseBlockRq, RQ],
  [parseBlockRqComplete, RQ_COMPLETE],
  [parseBlockBio, BIO],
  [parseBlockSplit, SPLIT],
  [parseBlockBuffer, BUFFER],
  [parseBlockPlug, PLUG],
  [parseBlockUnplug, UNPLUG],
]);

/** The fields block.ts's parser builds, in its object's key order. */
function seq(...keys: string[]): KvSeqInfo {
  return { keys, sig: keys.join('\u0000') };
}
const RQ_KEYS = seq('dev', 'sector', 'nr_sector', 'bytes', 'rwbs', 'comm', 'cmd');
const RQ_IOPRIO_KEYS = seq('dev', 'sector', 'nr_sector', 'bytes', 'ioprio', 'rwbs', 'comm', 'cmd');
const RQ_COMPLETE_KEYS = seq('dev', 'sector', 'nr_sector', 'error', 'rwbs', 'cmd');
const RQ_COMPLETE_IOPRIO_KEYS = seq('dev', 'sector', 'nr_sector', 'error', 'ioprio', 'rwbs', 'cmd');
const BIO_KEYS = seq('dev', 'sector', 'nr_sector', 'rwbs', 'comm');
const SPLIT_KEYS = seq('dev', 'sector', 'new_sector', 'rwbs', 'comm');
const BUFFER_KEYS = seq('dev', 'sector', 'size');
const PLUG_KEYS = seq('comm');
const UNPLUG_KEYS = seq('nr_rq', 'comm');

/** The reader of a block event whose text block.ts reads (PRINTED_PARSERS), else null. */
export function blockTextScanFor(name: string): BlockTextScan | null {
  const layout = LAYOUT_OF.get(PRINTED_PARSERS[name]);
  return layout === undefined ? null : new BlockTextScan(layout);
}

const MAX_FIELDS = 8;
/** Digits of a number taken here: below 2^53, as Number() reads it. */
const MAX_DIGITS = 15;
/** Digits of dev's major and minor: MKDEV's major * 2^20 + minor stays below 2^53. */
const MAX_DEV_DIGITS = 9;

/**
 * One event's scan (scan() true): the key sequence, per field its kind
 * (KV_INT, KV_HEX, KV_STR as untyped_rows.ts's kindOf() gives the parser's
 * value), its value's span in the bytes and, for integers, the value; `code`
 * the fields' kind code (ShapeRowColumns.begin). The same members as
 * UntypedKvScan's, for the same row writer.
 */
export class BlockTextScan implements ScannedFields {
  info: KvSeqInfo = PLUG_KEYS;
  readonly nums = new Float64Array(MAX_FIELDS);
  readonly starts = new Int32Array(MAX_FIELDS);
  readonly ends = new Int32Array(MAX_FIELDS);
  readonly kinds = new Int8Array(MAX_FIELDS);
  code = 0;
  private n = 0;
  /** 3^n: the next field's weight in `code` (`3 ** n` was V8's Math.pow, ~4% of the field worker on many_systems). */
  private weight = 1;
  /** devRwbs's rwbs span. */
  private rwbs = 0;
  private rwbsEnd = 0;

  /** `layout`: which of block.ts's regexes prints the event's text (RQ ... UNPLUG). */
  constructor(private readonly layout: number) {}

  /** Reads b[s, e) as the layout's regex would (true), or leaves it (false: block.ts reads it). */
  scan(b: Uint8Array, s: number, e: number): boolean {
    const layout = this.layout;
    // Bytes the regexes' `.` and `\S` take alike, and the layout's brackets counted.
    let open = 0;
    let close = 0;
    let paren = 0;
    for (let p = s; p < e; p++) {
      const c = b[p]!;
      if (c < 32 || c > 126) return false;
      if (c === 91) open++;
      else if (c === 93) close++;
      else if (c === 40 || c === 41) paren++;
    }
    this.n = 0;
    this.code = 0;
    this.weight = 1;
    switch (layout) {
      case RQ:
      case RQ_COMPLETE:
        return open === 1 && close === 1 && paren === 2 && this.rq(layout === RQ, b, s, e);
      case BIO:
      case SPLIT:
        return open === 1 && close === 1 && this.bio(layout === BIO, b, s, e);
      case BUFFER:
        return this.buffer(b, s, e);
      case PLUG:
        // ^\[(.*)\]$
        if (e - s < 2 || b[s] !== 91 || b[e - 1] !== 93) return false;
        this.info = PLUG_KEYS;
        this.text(b, s + 1, e - 1);
        return true;
      case UNPLUG:
        return this.unplug(b, s, e);
      default:
        return false;
    }
  }

  /**
   * ^(\d+),(\d+) (\S*) (?:(\d+) )?\((.*)\) (\d+) \+ (\d+)(?: ([^ ,]+),\d+,\d+)? \[(.*)\]$
   * with bytes (parseBlockRq) or without them and an error number in the
   * brackets (parseBlockRqComplete).
   */
  private rq(withBytes: boolean, b: Uint8Array, s: number, e: number): boolean {
    let p = this.devRwbs(b, s, e);
    if (p < 0) return false;
    const { rwbs, rwbsEnd } = this;
    const bytesAt = p;
    const bytesEnd = digitsEnd(b, p, e);
    let hasBytes = false;
    if (bytesEnd > bytesAt && b[bytesEnd] === 32 && b[bytesEnd + 1] === 40) {
      hasBytes = true;
      p = bytesEnd + 1;
    }
    if (hasBytes !== withBytes || b[p] !== 40) return false;
    const cmd = ++p;
    while (p < e && b[p] !== 41) p++;
    const cmdEnd = p;
    if (b[p + 1] !== 32) return false;
    p += 2;
    const sectorAt = p;
    p = digitsEnd(b, p, e);
    const sectorEnd = p;
    if (b[p] !== 32 || b[p + 1] !== 43 || b[p + 2] !== 32) return false;
    p += 3;
    const nrAt = p;
    p = digitsEnd(b, p, e);
    const nrEnd = p;
    if (b[p] !== 32) return false;
    p++;
    // ioprio `([^ ,]+),\d+,\d+ ` (the class kept), unless the brackets start here.
    let ioprio = -1;
    let ioprioEnd = -1;
    if (b[p] !== 91) {
      ioprio = p;
      while (p < e && b[p] !== 32 && b[p] !== 44) p++;
      ioprioEnd = p;
      if (ioprioEnd === ioprio || b[p] !== 44) return false;
      for (let part = 0; part < 2; part++) {
        const d = digitsEnd(b, p + 1, e);
        if (d === p + 1 || b[d] !== (part === 0 ? 44 : 32)) return false;
        p = d;
      }
      p++;
      if (b[p] !== 91) return false;
    }
    // [comm or error] ends the text (its only brackets: checked by scan()).
    const inner = p + 1;
    if (b[e - 1] !== 93) return false;
    const innerEnd = e - 1;
    if (!this.int(b, sectorAt, sectorEnd) || !this.int(b, nrAt, nrEnd)) return false;
    if (withBytes) {
      if (!this.int(b, bytesAt, bytesEnd)) return false;
    } else if (!this.signedInt(b, inner, innerEnd)) return false;
    if (ioprio >= 0) this.text(b, ioprio, ioprioEnd);
    this.text(b, rwbs, rwbsEnd);
    if (withBytes) this.text(b, inner, innerEnd);
    this.text(b, cmd, cmdEnd);
    this.info = withBytes
      ? ioprio >= 0
        ? RQ_IOPRIO_KEYS
        : RQ_KEYS
      : ioprio >= 0
        ? RQ_COMPLETE_IOPRIO_KEYS
        : RQ_COMPLETE_KEYS;
    return true;
  }

  /** ^(\d+),(\d+) (\S*) (\d+) \+ (\d+) \[(.*)\]$ (bio), or with ` / ` for ` + ` (split). */
  private bio(isBio: boolean, b: Uint8Array, s: number, e: number): boolean {
    let p = this.devRwbs(b, s, e);
    if (p < 0) return false;
    const { rwbs, rwbsEnd } = this;
    const aAt = p;
    p = digitsEnd(b, p, e);
    const aEnd = p;
    if (b[p] !== 32 || b[p + 1] !== (isBio ? 43 : 47) || b[p + 2] !== 32) return false;
    p += 3;
    const bAt = p;
    p = digitsEnd(b, p, e);
    const bEnd = p;
    if (b[p] !== 32 || b[p + 1] !== 91 || b[e - 1] !== 93) return false;
    if (!this.int(b, aAt, aEnd) || !this.int(b, bAt, bEnd)) return false;
    this.text(b, rwbs, rwbsEnd);
    this.text(b, p + 2, e - 1);
    this.info = isBio ? BIO_KEYS : SPLIT_KEYS;
    return true;
  }

  /** ^(\d+),(\d+) sector=(\d+) size=(\d+)$ */
  private buffer(b: Uint8Array, s: number, e: number): boolean {
    let p = this.dev(b, s, e);
    if (p < 0 || !sameBytesBefore(b, p, e, SECTOR)) return false;
    p += SECTOR.n;
    const sectorAt = p;
    p = digitsEnd(b, p, e);
    const sectorEnd = p;
    if (!sameBytesBefore(b, p, e, SIZE)) return false;
    p += SIZE.n;
    const sizeEnd = digitsEnd(b, p, e);
    if (sizeEnd !== e || !this.int(b, sectorAt, sectorEnd) || !this.int(b, p, sizeEnd)) return false;
    this.info = BUFFER_KEYS;
    return true;
  }

  /** ^\[(.*)\] (\d+)$: the comm up to the `] ` before the digits that end the text. */
  private unplug(b: Uint8Array, s: number, e: number): boolean {
    let d = e;
    while (d > s && b[d - 1]! >= 48 && b[d - 1]! <= 57) d--;
    if (d === e || d - s < 3 || b[s] !== 91 || b[d - 1] !== 32 || b[d - 2] !== 93) return false;
    if (!this.int(b, d, e)) return false;
    this.text(b, s + 1, d - 2);
    this.info = UNPLUG_KEYS;
    return true;
  }

  /** dev, then rwbs up to the next space (`(\S*) `: its span in rwbs, rwbsEnd); the offset after that space, or -1. */
  private devRwbs(b: Uint8Array, s: number, e: number): number {
    let p = this.dev(b, s, e);
    if (p < 0) return -1;
    this.rwbs = p;
    while (p < e && b[p] !== 32) p++;
    if (p >= e) return -1;
    this.rwbsEnd = p;
    return p + 1;
  }

  /** `major,minor ` at s as dev (MKDEV); the offset after its space, or -1. */
  private dev(b: Uint8Array, s: number, e: number): number {
    const majorEnd = digitsEnd(b, s, e);
    if (majorEnd === s || majorEnd - s > MAX_DEV_DIGITS || b[majorEnd] !== 44) return -1;
    const minorEnd = digitsEnd(b, majorEnd + 1, e);
    if (minorEnd === majorEnd + 1 || minorEnd - majorEnd - 1 > MAX_DEV_DIGITS || b[minorEnd] !== 32) return -1;
    this.field(KV_INT, s, minorEnd, digitsValue(b, s, majorEnd) * 1048576 + digitsValue(b, majorEnd + 1, minorEnd));
    return minorEnd + 1;
  }

  /** A field of the digits b[s, e) (1 to MAX_DIGITS): false when there are none or more. */
  private int(b: Uint8Array, s: number, e: number): boolean {
    if (e === s || e - s > MAX_DIGITS) return false;
    this.field(KV_INT, s, e, digitsValue(b, s, e));
    return true;
  }

  /** parseBlockRqComplete's error: /^-?\d+$/ read by Number(). */
  private signedInt(b: Uint8Array, s: number, e: number): boolean {
    const neg = b[s] === 45;
    const d = neg ? s + 1 : s;
    if (digitsEnd(b, d, e) !== e || e === d || e - d > MAX_DIGITS) return false;
    const v = digitsValue(b, d, e);
    this.field(KV_INT, s, e, neg ? -v : v);
    return true;
  }

  /** A text field: its kind as kindOf() gives a string (canonical `0x...` text is hex). */
  private text(b: Uint8Array, s: number, e: number): void {
    this.field(canonicalHex(b, s, e) ? KV_HEX : KV_STR, s, e, 0);
  }

  private field(kind: number, s: number, e: number, v: number): void {
    const k = this.n++;
    this.kinds[k] = kind;
    this.starts[k] = s;
    this.ends[k] = e;
    this.nums[k] = v;
    this.code += kind * this.weight;
    this.weight *= 3;
  }
}

const SECTOR = asciiBytes('sector=');
const SIZE = asciiBytes(' size=');

/** The end of the ASCII digits from p. */
function digitsEnd(b: Uint8Array, p: number, e: number): number {
  while (p < e && b[p]! >= 48 && b[p]! <= 57) p++;
  return p;
}

function digitsValue(b: Uint8Array, s: number, e: number): number {
  let v = 0;
  for (let p = s; p < e; p++) v = v * 10 + (b[p]! - 48);
  return v;
}

/** untyped_rows.ts isCanonicalHex of the text b[s, e). */
function canonicalHex(b: Uint8Array, s: number, e: number): boolean {
  const n = e - s;
  if (n < 3 || n > 18 || b[s] !== 48 || b[s + 1] !== 120) return false;
  if (b[s + 2] === 48) return n === 3;
  for (let p = s + 2; p < e; p++) {
    const c = b[p]!;
    if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) return false;
  }
  return true;
}
