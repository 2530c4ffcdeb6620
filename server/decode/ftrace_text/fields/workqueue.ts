/**
 * Workqueue events (include/trace/events/workqueue.h):
 *   queue_work 6.x: `work struct=0000000012345678 function=vmstat_update workqueue=mm_percpu_wq req_cpu=1 cpu=1`
 *     (older kernels: workqueue is a pointer)
 *   execute_start / execute_end: `work struct 0000000012345678: function vmstat_update`
 *   activate_work: `work struct 0000000012345678` (newer kernels add ` function=...`)
 * work = normalized pointer, function = bare symbol.
 */
import type { EventFields } from '../../decoded_event.ts';
import { bareSymbol, KvSpec, kvObject, normalizePointer } from './generic.ts';
import type { FieldParser } from './types.ts';

const SPEC = new KvSpec({}, new Set(['workqueue', 'function']));

export const parseWorkqueue: FieldParser = (t) => {
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
};
