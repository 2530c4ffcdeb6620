/**
 * Writeback events (include/trace/events/writeback.h): mostly key=value after
 * a `bdi <name>: ` prefix, e.g. `bdi 7:0: ino=12 index=0`;
 * writeback_work_class adds `sb_dev 0:0` before the pairs.
 * -> bdi (string) plus the pairs. global_dirty_state has no bdi; its printed
 * names are mapped to the typed table's columns (see GLOBAL_RENAME).
 */
import type { EventFields } from '../../decoded_event.ts';
import { addKeyValues, splitKeyValues } from './generic.ts';
import type { FieldParser } from './types.ts';

const STRINGS = new Set(['bdi', 'reason', 'state', 'sb_dev']);

export const parseWriteback: FieldParser = (t) => {
  const out: EventFields = {};
  let rest = t;
  if (t.startsWith('bdi ')) {
    const c = t.indexOf(': ', 4);
    const end = c >= 0 ? c : t.endsWith(':') ? t.length - 1 : -1;
    if (end < 0) return null;
    out.bdi = t.slice(4, end);
    rest = t.slice(end + 1).trim();
  }
  const { firstKeyAt } = splitKeyValues(rest);
  const pre = rest.slice(0, firstKeyAt).trim();
  if (pre.startsWith('sb_dev ')) out.sb_dev = pre.slice(7).trim();
  else if (pre !== '') return null;
  addKeyValues(rest.slice(firstKeyAt), out, undefined, STRINGS);
  return out;
};

/** global_dirty_state: printed names -> typed table columns. */
const GLOBAL_RENAME: Readonly<Record<string, string>> = {
  bg_thresh: 'background_thresh',
  background: 'background_thresh',
  thresh: 'dirty_thresh',
  limit: 'dirty_limit',
  dirtied: 'nr_dirtied',
  written: 'nr_written',
};

export const parseGlobalDirtyState: FieldParser = (t) => {
  const out: EventFields = {};
  if (addKeyValues(t, out, GLOBAL_RENAME) === 0) return null;
  return out;
};
