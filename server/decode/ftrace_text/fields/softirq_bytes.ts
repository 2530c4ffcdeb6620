/**
 * softirq_raise / _entry / _exit texts (`vec=9 [action=RCU]`) read from
 * their bytes for the field worker to write straight into the event's shape
 * row, as untyped_kv.ts does for plain key=value texts.
 *
 * Why: the generic parser reads them as {vec} (it passes over the bracketed
 * action), which is not plain key=value text, so they took the general path
 * (a string, the generic parser, a fields object held for continuation
 * lines, report_line.ts's softirq() rendering to decide `raw`, and
 * UntypedRows.shapeFor): 9% of many_systems' text.
 *
 * It takes only the text report_line.ts's softirq() prints from {vec}
 * (so `raw` is null once KeptRaw has seen the name print back): `vec=`, a
 * decimal of one or two digits without a leading zero, ` [action=`, the
 * vector's name (its number past the known ones), `]`. The generic parser
 * reads exactly {vec: N} from that; anything else is left to it.
 */
import { SOFTIRQS } from '../../../notes/report_line.ts';
import { KV_INT, type KvSeqInfo, type ScannedFields } from './untyped_kv.ts';
import { asciiBytes, sameBytes, sameBytesBefore } from './byte_keys.ts';

const VEC_KEYS: KvSeqInfo = { keys: ['vec'], sig: 'vec' };

/** The events printed so (include/trace/events/irq.h softirq template). */
export function isSoftirqEvent(name: string): boolean {
  return name === 'softirq_raise' || name === 'softirq_entry' || name === 'softirq_exit';
}

const ACTION = asciiBytes(' [action=');
/** `NAME]` by vector: what the text must end with. */
const ACTION_NAMES = Array.from({ length: 100 }, (_, v) => asciiBytes(`${SOFTIRQS[v] ?? v}]`));

/** One event's reading (scan() true): the one field `vec`, an integer. */
export class SoftirqTextScan implements ScannedFields {
  readonly info = VEC_KEYS;
  readonly kinds = Int8Array.of(KV_INT);
  readonly starts = new Int32Array(1);
  readonly ends = new Int32Array(1);
  readonly nums = new Float64Array(1);
  readonly code = 0;

  /** Reads b[s, e) as {vec} when it is softirq()'s text of it (true), else leaves it (false). */
  scan(b: Uint8Array, s: number, e: number): boolean {
    if (e - s < 4 || b[s] !== 118 || b[s + 1] !== 101 || b[s + 2] !== 99 || b[s + 3] !== 61) return false; // vec=
    const d = s + 4;
    let p = d;
    while (p < e && p - d < 3 && b[p]! >= 48 && b[p]! <= 57) p++;
    const n = p - d;
    if (n === 0 || n > 2 || (n === 2 && b[d] === 48)) return false;
    const v = n === 1 ? b[d]! - 48 : (b[d]! - 48) * 10 + (b[d + 1]! - 48);
    if (!sameBytesBefore(b, p, e, ACTION)) return false;
    p += ACTION.n;
    const name = ACTION_NAMES[v]!;
    if (e - p !== name.n || !sameBytes(b, p, name)) return false;
    this.starts[0] = d;
    this.ends[0] = d + n;
    this.nums[0] = v;
    return true;
  }
}
