/**
 * Memory reclaim events (include/trace/events/vmscan.h), key=value style.
 * Printed names that differ from the format file's are renamed to the
 * format-file names, which the trace.dat decoder produces:
 *   flags= -> reclaim_flags, nr_activate_anon/_file -> nr_activate0/1,
 *   usect_delayed= (the kernel's typo) -> usec_delayed,
 *   classzone= -> highest_zoneidx (5.x+; 4.x's classzone_idx stays as is).
 *
 * mm_vmscan_writepage / mm_vmscan_write_folio print `page=` (a hashed
 * pointer in tracefs text, the pfn again in trace-cmd report) and `pfn=`
 * (decimal on 4.x, 0x-hex on newer kernels): only pfn (a number) and
 * reclaim_flags are fields (the format file of 4.x+ has no page field).
 */
import type { EventFields } from '../../decoded_event.ts';
import { ranged } from './generic.ts';
import { kvRangeBytes } from './key_values_bytes.ts';
import { KvSpec } from './kv_spec.ts';
import type { KvShape } from './kv_columns.ts';
import { orRawFields } from './raw_fields.ts';
import type { FieldParser } from './types.ts';

const RENAME: Readonly<Record<string, string>> = {
  flags: 'reclaim_flags',
  nr_activate_anon: 'nr_activate0',
  nr_activate_file: 'nr_activate1',
  usect_delayed: 'usec_delayed',
  classzone: 'highest_zoneidx',
};

/** Always text: symbolic flags and enums. */
const STRINGS = new Set(['reclaim_flags', 'gfp_flags', 'reason', 'lru']);
/** Numeric even when printed in hex. */
const NUMERIC = new Set(['pfn']);
const SPEC = new KvSpec(RENAME, STRINGS, NUMERIC);

/** The key=value shape of each parser kv() made, for writing their text straight into columns (kv_columns.ts). */
export const VMSCAN_KV_SHAPES = new Map<FieldParser, KvShape>();

function kv(required: readonly string[]): FieldParser {
  const keys = required.slice();
  const numeric = required.map((k) => !STRINGS.has(k));
  const check = (out: EventFields | null): EventFields | null => {
    if (out === null) return null;
    for (let i = 0; i < keys.length; i++) {
      const v = out[keys[i]!];
      if (v === undefined) return null;
      if (numeric[i] && typeof v === 'string') return null;
    }
    return out;
  };
  // Raw fields (raw_fields.ts, e.g. options/fields' `nr_scanned=0x473 (1139)`) when the printed form fails.
  const parser = ranged(orRawFields((t, s, e, _args, b) => check(kvRangeBytes(b, t, s, e, SPEC)), SPEC, keys, check));
  // The required numeric keys are never text keys (STRINGS), so text that
  // KvColumnWriter takes, whose other values are all numbers, passes that check too.
  VMSCAN_KV_SHAPES.set(parser, { spec: SPEC, required: keys });
  return parser;
}

export const parseKswapdSleep = kv(['nid']);
export const parseKswapdWake = kv(['nid', 'order']);
export const parseWakeupKswapd = kv(['nid', 'order', 'gfp_flags']);
export const parseReclaimBegin = kv(['order', 'gfp_flags']);
export const parseReclaimEnd = kv(['nr_reclaimed']);
export const parseLruShrinkInactive = kv(['nid', 'nr_scanned', 'nr_reclaimed', 'priority', 'reclaim_flags']);
export const parseLruShrinkActive = kv(['nid', 'nr_taken', 'priority', 'reclaim_flags']);
export const parseLruIsolate = kv(['order', 'nr_requested', 'nr_scanned', 'nr_taken']);
/** mm_vmscan_reclaim_pages (DAMON/proactive reclaim): same counters as shrink_inactive. */
export const parseReclaimPages = kv(['nid', 'nr_scanned', 'nr_reclaimed']);
export const parseThrottled = kv(['nid', 'usec_timeout', 'usec_delayed', 'reason']);

/** mm_vmscan_writepage / mm_vmscan_write_folio. */
function writeFolio(out: EventFields | null): EventFields | null {
  if (out === null) return null;
  if (typeof out.pfn !== 'number' && typeof out.pfn !== 'bigint') return null;
  if (typeof out.reclaim_flags !== 'string') return null;
  delete out.page;
  return out;
}

export const parseWriteFolio: FieldParser = ranged(
  orRawFields(
    (t, s, e, _args, b) => writeFolio(kvRangeBytes(b, t, s, e, SPEC)),
    SPEC,
    ['pfn', 'reclaim_flags'],
    writeFolio,
  ),
);
