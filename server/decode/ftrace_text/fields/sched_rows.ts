/**
 * The scheduler's commonest text lines written straight into their typed
 * rows (DirectRows), without a string of the arguments, a fields object and
 * a held event per line: sched_switch and sched_waking / sched_wakeup /
 * sched_wakeup_new, in the kernel's form and trace-cmd report's plugin form.
 *
 * Why: those events are 30-45% of the corpus's lines and, as the events that
 * name tasks, are parsed on the main thread (the field worker takes the
 * others). Per line that cost an argument string, the fields object, the
 * held DecodedEvent and the compiled writer's property reads: the main
 * thread was the busiest of the text ingest's threads on sched_wq.
 *
 * The readers here are stricter than sched.ts's parsers, which stay the
 * definition: they take only the plain shapes (task names without spaces,
 * plain decimal numbers of at most MAX_DIGITS digits, no padding to trim,
 * nothing after the last value) and for those give exactly what the parser
 * gives (sched_rows.test.ts compares them line by line). Anything else
 * returns false before a row is begun, and the line takes the parser.
 */
import type { DirectRows } from '../../decoded_event.ts';
import { internBytes, memoize } from './intern.ts';
import { reportPrevState } from './sched.ts';

/**
 * Longest number read here: 7 digits cannot be a pointer-width (8 or 16
 * digit) zero-padded value, which the key=value reader keeps as text.
 */
const MAX_DIGITS = 7;

/** Field slots of the readers' output; the table's columns are matched to them by name. */
const SWITCH_KEYS = ['prev_comm', 'prev_pid', 'prev_prio', 'prev_state', 'next_comm', 'next_pid', 'next_prio'];
const WAKEUP_KEYS = ['comm', 'pid', 'prio', 'target_cpu'];
/** Slots holding text (the rest are integers). */
const SWITCH_TEXT = [true, false, false, true, true, false, false];
const WAKEUP_TEXT = [true, false, false, false];

/** The readers' output: integers, and text as byte ranges. */
interface Slots {
  nums: Float64Array;
  starts: Int32Array;
  ends: Int32Array;
  /** The report's prev_state holds letters the report names differently (sched.ts reportPrevState). */
  reportState: boolean;
}

const NUL = -1;

/** Decimal digits b[s, e) (1..MAX_DIGITS of them), else NaN. */
function digits(b: Uint8Array, s: number, e: number): number {
  const n = e - s;
  if (n <= 0 || n > MAX_DIGITS) return NaN;
  let v = 0;
  for (let i = s; i < e; i++) {
    const c = b[i]!;
    if (c < 48 || c > 57) return NaN;
    v = v * 10 + (c - 48);
  }
  return v;
}

/** Whether b[s, s + key.length) is the ASCII string key. */
function startsWithAt(b: Uint8Array, s: number, key: string): boolean {
  const n = key.length;
  for (let k = 0; k < n; k++) if (b[s + k] !== key.charCodeAt(k)) return false;
  return true;
}

/** Index of the first byte in b[s, e) that is a space, or e; NUL when a byte is a control or non-ASCII one. */
function wordEnd(b: Uint8Array, s: number, e: number): number {
  for (let i = s; i < e; i++) {
    const c = b[i]!;
    if (c === 32) return i;
    if (c < 33 || c > 126) return NUL;
  }
  return e;
}

/** Last index of byte c in b[s, e), or NUL. */
function lastIndexOfByte(b: Uint8Array, c: number, s: number, e: number): number {
  for (let i = e - 1; i >= s; i--) if (b[i] === c) return i;
  return NUL;
}

/**
 * `key=WORD ` at b[p]: the word's end (a space follows, or the range ends
 * when `last`), NUL otherwise. The word is at least one printable byte and
 * holds no `=` (where the key=value reader might see another key).
 */
function keyWord(b: Uint8Array, p: number, e: number, key: string, last: boolean): number {
  if (!startsWithAt(b, p, key)) return NUL;
  const v = p + key.length;
  let q = v;
  for (; q < e; q++) {
    const c = b[q]!;
    if (c === 32) break;
    if (c < 33 || c > 126 || c === 61) return NUL;
  }
  if (q === v || (last ? q !== e : q >= e)) return NUL;
  return q;
}

/**
 * The kernel's form, `k0=V k1=V ...`: each of `keys` (with their `=`) in
 * order, a text slot's value as a byte range, a number's as digits; after
 * slot `arrowAfter` comes ` ==> ` instead of a space; the last value ends
 * the text. As sched.ts's switchKernelFast and the key=value reader read
 * them.
 */
function kernelKeyValues(
  b: Uint8Array,
  s: number,
  e: number,
  o: Slots,
  keys: readonly string[],
  text: readonly boolean[],
  arrowAfter: number,
): boolean {
  const { nums, starts, ends } = o;
  const last = keys.length - 1;
  let p = s;
  for (let k = 0; k <= last; k++) {
    const key = keys[k]!;
    const q = keyWord(b, p, e, key, k === last);
    if (q === NUL) return false;
    const v = p + key.length;
    if (text[k]) {
      starts[k] = v;
      ends[k] = q;
    } else if ((nums[k] = digits(b, v, q)) !== nums[k]) return false;
    if (k !== arrowAfter) p = q + 1;
    else if (startsWithAt(b, q, ' ==> ')) p = q + 5;
    else return false;
  }
  return true;
}

const SWITCH_KERNEL_KEYS = SWITCH_KEYS.map((k) => `${k}=`);
/** The kernel's `prev_comm=C prev_pid=N prev_prio=N prev_state=S ==> next_comm=C next_pid=N next_prio=N`. */
const switchKernel = (b: Uint8Array, s: number, e: number, o: Slots) =>
  kernelKeyValues(b, s, e, o, SWITCH_KERNEL_KEYS, SWITCH_TEXT, 3);

/**
 * `C:N [P]` ending at e (the `]` is b[e - 1]): task name range into slot
 * k, pid into k + 1, prio into k + 2, as commPidFast and the prio read of
 * sched.ts's report readers do. The name may hold colons (the pid is after
 * the last one) but no space.
 */
function commPidPrio(b: Uint8Array, s: number, e: number, o: Slots, k: number): boolean {
  if (b[e - 1] !== 93) return false;
  const open = lastIndexOfByte(b, 91, s, e - 1);
  if (open < s + 3 || b[open - 1] !== 32) return false;
  const prio = digits(b, open + 1, e - 1);
  if (prio !== prio) return false;
  const nameEnd = open - 1;
  const colon = lastIndexOfByte(b, 58, s, nameEnd);
  if (colon <= s) return false;
  const pid = digits(b, colon + 1, nameEnd);
  if (pid !== pid || wordEnd(b, s, colon) !== colon) return false;
  o.starts[k] = s;
  o.ends[k] = colon;
  o.nums[k + 1] = pid;
  o.nums[k + 2] = prio;
  return true;
}

/**
 * Whether b[s, e) (printable ASCII, no space: else NUL) holds a letter the
 * report names differently (Z, X, x, W: sched.ts plainState, REPORT_STATE).
 */
function reportStateLetters(b: Uint8Array, s: number, e: number): number {
  let other = 0;
  for (let i = s; i < e; i++) {
    const c = b[i]!;
    if (c <= 32 || c > 126) return NUL;
    if (c === 90 || c === 88 || c === 120 || c === 87) other = 1;
  }
  return other;
}

/** trace-cmd's sched_switch plugin: `C:N [P] S ==> C:N [P]`, as sched.ts's switchReportFast reads it. */
function switchReport(b: Uint8Array, s: number, e: number, o: Slots): boolean {
  // The arrow: the only ` ==> ` (names hold no space).
  let arrow = NUL;
  for (let i = s; i + 5 <= e; i++) {
    if (b[i] === 32 && b[i + 1] === 61 && b[i + 2] === 61 && b[i + 3] === 62 && b[i + 4] === 32) {
      if (arrow !== NUL) return false;
      arrow = i;
    }
  }
  if (arrow === NUL) return false;
  // prev: `C:N [P] S`, the state one word after the `]`.
  const stateStart = lastIndexOfByte(b, 32, s, arrow) + 1;
  if (stateStart <= s + 1 || stateStart === arrow || b[stateStart - 2] !== 93) return false;
  const letters = reportStateLetters(b, stateStart, arrow);
  if (letters === NUL || !commPidPrio(b, s, stateStart - 1, o, 0)) return false;
  o.reportState = letters === 1;
  // commPidPrio wrote name 0, pid 1, prio 2; the switch's slots put the state at 3.
  o.starts[3] = stateStart;
  o.ends[3] = arrow;
  return commPidPrio(b, arrow + 5, e, o, 4);
}

const WAKEUP_KERNEL_KEYS = WAKEUP_KEYS.map((k) => `${k}=`);
/** The kernel's `comm=C pid=N prio=N target_cpu=N` (no `success=`). */
const wakeupKernel = (b: Uint8Array, s: number, e: number, o: Slots) =>
  kernelKeyValues(b, s, e, o, WAKEUP_KERNEL_KEYS, WAKEUP_TEXT, -1);

/** trace-cmd's sched_wakeup plugin: `C:N [P] CPU:NNN`, as sched.ts's wakeupReportFast reads it. */
function wakeupReport(b: Uint8Array, s: number, e: number, o: Slots): boolean {
  const sp = lastIndexOfByte(b, 32, s, e);
  if (sp < s + 4 || !startsWithAt(b, sp + 1, 'CPU:')) return false;
  const cpu = digits(b, sp + 5, e);
  if (cpu !== cpu || !commPidPrio(b, s, sp, o, 0)) return false;
  o.nums[3] = cpu;
  return true;
}

type Reader = (b: Uint8Array, s: number, e: number, o: Slots) => boolean;

/** What an event name's lines are read by here. */
interface SchedForm {
  keys: readonly string[];
  text: readonly boolean[];
  /** The kernel's form (the text starts with `kernelStart`) and the report plugin's. */
  kernelStart: string;
  kernel: Reader;
  report: Reader;
}

const SWITCH: SchedForm = {
  keys: SWITCH_KEYS,
  text: SWITCH_TEXT,
  kernelStart: 'prev_comm=',
  kernel: switchKernel,
  report: switchReport,
};
const WAKEUP: SchedForm = {
  keys: WAKEUP_KEYS,
  text: WAKEUP_TEXT,
  kernelStart: 'comm=',
  kernel: wakeupKernel,
  report: wakeupReport,
};

/** The event names read here and their form (sched.ts: parseSchedSwitch, parseSchedWakeup). */
const FORMS: ReadonlyMap<string, SchedForm> = new Map([
  ['sched_switch', SWITCH],
  ['sched_waking', WAKEUP],
  ['sched_wakeup', WAKEUP],
  ['sched_wakeup_new', WAKEUP],
]);

/** Whether lines of this event name can be written here (SchedRows.of). */
export function hasSchedRows(name: string): boolean {
  return FORMS.has(name);
}

/** Shared by every SchedRows: one line is read at a time. */
const slots: Slots = {
  nums: new Float64Array(8),
  starts: new Int32Array(8),
  ends: new Int32Array(8),
  reportState: false,
};

/** sched.ts's translation of the report's state letters (`W` -> `I`...), once per distinct state. */
const kernelState = memoize(reportPrevState);

/** Slot of prev_state (SWITCH_KEYS). */
const PREV_STATE = 3;

/** One event name's lines into its rows. */
export class SchedRows {
  /** Per column of rows.fields, in order: the slot that fills it, -1 when none (NULL). */
  private readonly slotOf: Int32Array;
  private readonly columnOf: Int32Array;
  /** Per column: 1 for an INTEGER one, whose value goes straight into its array (as compiled readers write it). */
  private readonly i32: Uint8Array;

  private constructor(
    private readonly rows: DirectRows,
    private readonly form: SchedForm,
  ) {
    const cols = rows.fields;
    this.slotOf = new Int32Array(cols.length);
    this.columnOf = new Int32Array(cols.length);
    this.i32 = new Uint8Array(cols.length);
    for (let k = 0; k < cols.length; k++) {
      // The first of the column's names the reader gives wins, as the field writer takes names in order.
      let slot = -1;
      for (const n of cols[k]!.names) {
        slot = form.keys.indexOf(n);
        if (slot >= 0) break;
      }
      this.slotOf[k] = slot;
      this.columnOf[k] = cols[k]!.column;
      this.i32[k] = cols[k]!.kind === 'i32' ? 1 : 0;
    }
  }

  /** Rows of `name` written from its lines, or null when the name is not one read here. */
  static of(name: string, rows: DirectRows): SchedRows | null {
    const form = FORMS.get(name);
    return form === undefined ? null : new SchedRows(rows, form);
  }

  /**
   * Reads the arguments b[s, e) and, when they are a plain shape, writes
   * the event's row (begin's arguments as DirectRows.begin takes them) and
   * returns true; false: nothing written, the line takes the parser.
   */
  write(
    b: Uint8Array,
    s: number,
    e: number,
    ts: number,
    cpu: number,
    pid: number,
    comm: string | null,
    tgid: number | null,
    flags: number | null,
    preemptCount: number | null,
    where: number,
  ): boolean {
    const form = this.form;
    const o = slots;
    o.reportState = false;
    const ok = startsWithAt(b, s, form.kernelStart) ? form.kernel(b, s, e, o) : form.report(b, s, e, o);
    if (!ok) return false;
    const rows = this.rows;
    rows.begin(ts, cpu, pid, comm, flags, preemptCount, where, tgid);
    const { slotOf, columnOf, i32 } = this;
    const text = form.text;
    for (let k = 0; k < slotOf.length; k++) {
      const slot = slotOf[k]!;
      const column = columnOf[k]!;
      if (slot < 0) rows.absent(column);
      else if (text[slot]) {
        const v = internBytes(b, o.starts[slot]!, o.ends[slot]!);
        rows.value(column, slot === PREV_STATE && o.reportState ? kernelState(v) : v);
      } else if (i32[k] === 1) rows.arrays[column]![rows.row] = o.nums[slot]!;
      else rows.value(column, o.nums[slot]!);
    }
    rows.end();
    return true;
  }
}
