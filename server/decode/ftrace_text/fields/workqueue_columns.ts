/**
 * Workqueue events' argument text (workqueue.ts) written straight into
 * their typed table's columns, for text events whose fields are decoded on
 * the field worker (ingest/field_worker.ts):
 *   queue_work:            `work struct=0xffff88810245d1a8 function=blk_mq_requeue_work workqueue=kblockd req_cpu=256 cpu=0`
 *   activate_work:         `work struct 0xffff88822664c2b0 function=xlog_ioend_work` (older kernels: no function)
 *   execute_start / _end:  `work struct 0xffff88822664c2b0: function xlog_ioend_work`
 *
 * Why: on sched_wq's text (22% workqueue events) the fields-object path
 * (a string per event, workqueueFast's object, the table's field writer
 * interning each string) was ~330 ms of the field worker, the critical
 * thread of a text ingest. Here the pointer's text is made only when its
 * value is not in the column's key cache, and no object is built.
 *
 * It only takes the shapes above where the definition (parseWorkqueue) is
 * obvious from the bytes: a hex pointer of at most 16 significant digits,
 * a function that is a plain symbol (key characters, no `0x`, no
 * `+off/size`, no module), a workqueue name without spaces, quotes or `=`,
 * CPUs as plain decimals, single spaces between pairs. Anything else goes to
 * the parser, which stays the definition.
 */
import type { DirectRowColumns } from '../../decoded_event.ts';
import { internBytes, latin1 } from './intern.ts';
import { isKeyChar } from './text_scan.ts';
import { normalizePointer } from './values.ts';

/** The fields an event of each shape has, as the parser names them. */
const WORK = 0;
const FUNCTION = 1;
const WORKQUEUE = 2;
const REQ_CPU = 3;
const CPU = 4;
const SHAPE_FIELDS: readonly (readonly string[])[] = [
  ['work'],
  ['work', 'function'],
  ['work', 'function', 'workqueue', 'req_cpu', 'cpu'],
];
/** Whether each field is text (else an integer). */
const FIELD_IS_TEXT = [true, true, true, false, false];

/** One shape's columns: per column the field that fills it (-1: none, NULL), or null when a kind does not fit. */
type ShapePlan = Int32Array | null;

const WORK_STRUCT = bytesOf('work struct');
const FUNCTION_SP = bytesOf('function ');
const FUNCTION_EQ = bytesOf('function=');
const WORKQUEUE_EQ = bytesOf(' workqueue=');
const REQ_CPU_EQ = bytesOf(' req_cpu=');
const CPU_EQ = bytesOf(' cpu=');

function bytesOf(s: string): Uint8Array {
  return Uint8Array.from(s, (c) => c.charCodeAt(0));
}

function startsWithBytes(b: Uint8Array, p: number, e: number, w: Uint8Array): boolean {
  if (p + w.length > e) return false;
  for (let i = 0; i < w.length; i++) if (b[p + i] !== w[i]) return false;
  return true;
}

/** End of a plain symbol at p (key characters, not `0x...`): bareSymbol leaves it as it is; p: none. */
function symbolEnd(b: Uint8Array, p: number, e: number): number {
  if (p + 1 < e && b[p] === 48 && (b[p + 1] === 120 || b[p + 1] === 88)) return p;
  let q = p;
  while (q < e && isKeyChar(b[q]!)) q++;
  return q;
}

/** End of a workqueue name at p: printable, no space, quote or `=` (the token kvFast keeps as text). */
function nameEnd(b: Uint8Array, p: number, e: number): number {
  let q = p;
  let c = 0;
  while (q < e && (c = b[q]!) > 32 && c < 127 && c !== 61 && c !== 34) q++;
  return q;
}

export class WorkqueueColumnWriter {
  /** Per shape (index into SHAPE_FIELDS): its plan. */
  private readonly plans: ShapePlan[];
  /** What scan() read: the shape, the pointer's value (two 32-bit halves) and text range, the values' ranges. */
  private shape = 0;
  private workLo = 0;
  private workHi = 0;
  private readonly starts = new Int32Array(5);
  private readonly ends = new Int32Array(5);
  private readonly nums = new Float64Array(5);
  private bytes: Uint8Array | null = null;

  constructor(private readonly cols: DirectRowColumns) {
    this.plans = SHAPE_FIELDS.map((names) => {
      const plan = new Int32Array(cols.fields.length).fill(-1);
      for (let k = 0; k < cols.fields.length; k++) {
        const f = cols.fields[k]!;
        // As the table's field writer: the column takes the first of its names the fields have.
        const name = f.names.find((n) => names.includes(n));
        if (name === undefined) continue;
        const field = SHAPE_FIELDS[2]!.indexOf(name);
        if (FIELD_IS_TEXT[field] !== (f.kind === 'text') || (f.kind !== 'text' && f.kind !== 'i32')) return null;
        plan[k] = field;
      }
      return plan;
    });
  }

  /** Reads b[s, e) (ASCII argument text). True: held for write(); false: not sure, use the parser. */
  scan(b: Uint8Array, s: number, e: number): boolean {
    if (e - s < 12 || !startsWithBytes(b, s, e, WORK_STRUCT)) return false;
    let p = s + 11;
    if (b[p] === 61 || b[p] === 32) p++;
    let q = p;
    while (q < e && b[q] !== 32) q++;
    const pe = q > p && b[q - 1] === 58 ? q - 1 : q;
    // normalizePointer's input: optional 0x, then hex digits; the value kept only up to 64 bits.
    let h = p;
    if (pe - h >= 2 && b[h] === 48 && (b[h + 1] === 120 || b[h + 1] === 88)) h += 2;
    if (h >= pe) return false;
    let lo = 0;
    let hi = 0;
    let digits = 0;
    for (let i = h; i < pe; i++) {
      const c = b[i]!;
      let d: number;
      if (c >= 48 && c <= 57) d = c - 48;
      else if (c >= 97 && c <= 102) d = c - 87;
      else if (c >= 65 && c <= 70) d = c - 55;
      else return false;
      if (digits > 0 || d !== 0) digits++;
      if (digits > 16) return false;
      hi = hi * 16 + (lo >>> 28);
      lo = ((lo << 4) | d) >>> 0;
    }
    this.workLo = lo;
    this.workHi = hi;
    this.starts[WORK] = p;
    this.ends[WORK] = pe;
    // The rest, its spaces trimmed (another whitespace byte is no token byte below: left to the parser).
    let rs = q;
    while (rs < e && b[rs] === 32) rs++;
    let re = e;
    while (re > rs && b[re - 1] === 32) re--;
    this.bytes = b;
    if (rs === re) {
      this.shape = 0;
      return this.plans[0] !== null;
    }
    if (startsWithBytes(b, rs, re, FUNCTION_SP)) {
      // execute_start/end: the rest after `function ` is the symbol.
      let fs = rs + 9;
      while (fs < re && b[fs] === 32) fs++;
      if (fs === re || symbolEnd(b, fs, re) !== re) return false;
      this.starts[FUNCTION] = fs;
      this.ends[FUNCTION] = re;
      this.shape = 1;
      return this.plans[1] !== null;
    }
    if (!startsWithBytes(b, rs, re, FUNCTION_EQ)) return false;
    const fs = rs + 9;
    const fe = symbolEnd(b, fs, re);
    if (fe === fs) return false;
    this.starts[FUNCTION] = fs;
    this.ends[FUNCTION] = fe;
    if (fe === re) {
      this.shape = 1;
      return this.plans[1] !== null;
    }
    if (!startsWithBytes(b, fe, re, WORKQUEUE_EQ)) return false;
    const ws = fe + WORKQUEUE_EQ.length;
    const we = nameEnd(b, ws, re);
    if (we === ws) return false;
    this.starts[WORKQUEUE] = ws;
    this.ends[WORKQUEUE] = we;
    if (!startsWithBytes(b, we, re, REQ_CPU_EQ)) return false;
    const re1 = this.decimal(REQ_CPU, b, we + REQ_CPU_EQ.length, re);
    if (re1 < 0 || !startsWithBytes(b, re1, re, CPU_EQ)) return false;
    if (this.decimal(CPU, b, re1 + CPU_EQ.length, re) !== re) return false;
    this.shape = 2;
    return this.plans[2] !== null;
  }

  /** A plain decimal (1 to 9 digits, no leading zero) at p into nums[field]; its end, or -1. */
  private decimal(field: number, b: Uint8Array, p: number, e: number): number {
    let q = p;
    let v = 0;
    let c = 0;
    while (q < e && (c = b[q]!) >= 48 && c <= 57) {
      v = v * 10 + (c - 48);
      q++;
    }
    if (q === p || q - p > 9 || (q - p > 1 && b[p] === 48) || (q < e && c !== 32)) return -1;
    this.nums[field] = v;
    return q;
  }

  /** Writes the fields scan() read into the current row's columns. */
  write(): void {
    const plan = this.plans[this.shape]!;
    const cols = this.cols;
    const b = this.bytes!;
    const fields = cols.fields;
    for (let k = 0; k < plan.length; k++) {
      const field = plan[k]!;
      const c = fields[k]!.column;
      if (field < 0) cols.absent(c);
      else if (field === WORK) {
        // The pointer's text (normalizePointer's) only when its value is not in the column's cache.
        if (!cols.keyed(c, this.workLo, this.workHi))
          cols.text(c, normalizePointer(latin1(b, this.starts[WORK]!, this.ends[WORK]!))!);
      } else if (field === REQ_CPU || field === CPU) cols.arrays[c]![cols.row] = this.nums[field]!;
      else cols.value(c, internBytes(b, this.starts[field]!, this.ends[field]!));
    }
  }
}
