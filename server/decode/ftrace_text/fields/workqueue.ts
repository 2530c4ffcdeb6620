/**
 * Workqueue events (include/trace/events/workqueue.h):
 *   queue_work 6.x: `work struct=0000000012345678 function=vmstat_update workqueue=mm_percpu_wq req_cpu=1 cpu=1`
 *     (older kernels: workqueue is a pointer)
 *   execute_start / execute_end: `work struct 0000000012345678: function vmstat_update`
 *   activate_work: `work struct 0000000012345678` (newer kernels add ` function=...`)
 * work = normalized pointer, function = bare symbol.
 */
import type { EventFields, FieldValue } from '../../decoded_event.ts';
import { ranged } from './generic.ts';
import { internRange, memoize } from './intern.ts';
import { kvObject, kvRange } from './key_values.ts';
import { kvValuesBytes } from './key_values_bytes.ts';
import { type ExtraKeys, KvSpec, type SeqEntry } from './kv_spec.ts';
import { indexOfChar, trimEnd, trimStart } from './text_scan.ts';
import { bareSymbol, normalizePointer } from './values.ts';
import { orRawFields, rawPointer, rawSymbol } from './raw_fields.ts';
import type { FieldParser } from './types.ts';

const SPEC = new KvSpec({}, new Set(['workqueue', 'function']));

function parseWorkqueueSlow(t: string): EventFields | null {
  if (!t.startsWith('work struct')) return null;
  let p = 11;
  if (t.charCodeAt(p) === 61 || t.charCodeAt(p) === 32) p++; // '=' or ' '
  let q = t.indexOf(' ', p);
  if (q < 0) q = t.length;
  let ptr = t.slice(p, q);
  if (ptr.endsWith(':')) ptr = ptr.slice(0, -1);
  const work = normalizePointer(ptr);
  if (work === null) return null;
  let rest = t.slice(q).trim();
  if (rest.startsWith('function ')) rest = 'function=' + rest.slice(9).trim();
  const out: EventFields = kvObject(rest, SPEC) ?? {};
  out.work = work;
  if (typeof out.function === 'string') out.function = bareSymbol(out.function);
  return out;
}

const normalizePtr = memoize((s) => normalizePointer(s) ?? '');
const bareSym = memoize(bareSymbol);

/** The pairs' fields, then `work` (parseWorkqueueSlow assigns it after them). */
const WORK_AFTER: ExtraKeys = { lead: [], tail: ['work'] };
const workValue: FieldValue[] = [''];

/** Position of the last `function` key in a key sequence (the value an object keeps), -1 if none; by entry. */
const functionAt = new WeakMap<SeqEntry, number>();
function functionIndex(ent: SeqEntry): number {
  let i = functionAt.get(ent);
  if (i === undefined) {
    i = ent.rules.map((r) => r.key).lastIndexOf('function');
    functionAt.set(ent, i);
  }
  return i;
}

/** parseWorkqueueSlow(t.slice(s, e)) on the range; null when unsure. */
function workqueueFast(t: string, s: number, e: number, b: Uint8Array | null): EventFields | null {
  if (e - s < 12 || !t.startsWith('work struct', s)) return null;
  let p = s + 11;
  const c = t.charCodeAt(p);
  if (c === 61 || c === 32) p++;
  let q = indexOfChar(t, 32, p, e);
  if (q < 0) q = e;
  const pe = q > p && t.charCodeAt(q - 1) === 58 ? q - 1 : q;
  if (pe <= p) return null;
  const work = normalizePtr(internRange(t, p, pe));
  if (work === '') return null;
  // rest = t[q, e) trimmed
  const rs = trimStart(t, q, e);
  if (rs < 0) return null;
  const re = trimEnd(t, rs, e);
  if (re < 0) return null;
  if (rs === re) return { work };
  if (t.startsWith('function ', rs) && rs + 9 <= re) {
    // execute_start/end: `function name`; with no `=` after it the whole rest is the value
    const fs = trimStart(t, rs + 9, re);
    if (fs < 0 || fs >= re || indexOfChar(t, 61, fs, re) >= 0) return null;
    return { function: bareSym(internRange(t, fs, re)), work };
  }
  // queue_work, and activate_work on newer kernels: `function=... workqueue=...`
  // (half the workqueue events), on the line's bytes when its key sequence was seen
  const ent = b !== null ? kvValuesBytes(b, t, rs, re, SPEC) : null;
  if (ent !== null) {
    const vals = SPEC.vals;
    const fi = functionIndex(ent);
    if (fi >= 0 && typeof vals[fi] === 'string') vals[fi] = bareSym(vals[fi] as string);
    workValue[0] = work;
    return SPEC.builderWith(ent, WORK_AFTER)(workValue, vals);
  }
  const out = kvRange(t, rs, re, SPEC);
  if (out === null) return { work };
  out.work = work;
  if (typeof out.function === 'string') out.function = bareSym(out.function);
  return out;
}

/** Raw fields (raw_fields.ts): `work=0xffff... function=vmpressure_work_fn [workqueue=events req_cpu=256 cpu=1]`. */
function workFromRaw(f: EventFields): EventFields | null {
  const work = rawPointer(f.work);
  if (work === undefined) return null;
  const out: EventFields = { ...f, work };
  if (f.function !== undefined) out.function = rawSymbol(f.function) ?? f.function;
  return out;
}

export const parseWorkqueue: FieldParser = ranged(
  orRawFields((t, s, e, args, b) => workqueueFast(t, s, e, b) ?? parseWorkqueueSlow(args), SPEC, ['work'], workFromRaw),
);
