/**
 * mm_shrink_slab_start / mm_shrink_slab_end: prose, not key=value.
 *
 *   3.x: `super_cache_scan+0x0/0x1b0 ffff8800a1b2c3d4: objects to shrink 552 gfp_flags GFP_KERNEL pgs_scanned 45 lru_pgs 198175 cache items 9197 delta 4 total_scan 556`
 *   4.x: `super_cache_scan+0x0/0x1b0 00000000a1b2c3d4: nid: 0 objects to shrink 552 gfp_flags GFP_KERNEL pgs_scanned 45 lru_pgs 198175 cache items 9197 delta 4 total_scan 556`
 *   6.x: `super_cache_scan+0x0/0x210 00000000dbab40df: nid: 0 objects to shrink 0 gfp_flags GFP_KERNEL cache items 1234 delta 2 total_scan 2 priority 12`
 *   trace-cmd report: `super_cache_scan+0x0 0xffff888...: nid: 0 ...` (offset maybe absent)
 *   end: `<sym> <ptr>: nid: 0 unused scan count 552 new scan count 556 total_scan 4 last shrinker return val 0`
 *
 * shrink = bare symbol, shr = `0x` + lowercase hex without leading zeros.
 */
import type { EventFields } from '../../decoded_event.ts';
import { bareSymbol, normalizePointer, parseDecimal } from './generic.ts';
import type { FieldParser } from './types.ts';

/** Printed label -> field name. Values are single tokens. */
const START_LABELS: Readonly<Record<string, string>> = {
  'nid': 'nid',
  'objects to shrink': 'nr_objects_to_shrink',
  'gfp_flags': 'gfp_flags',
  'pgs_scanned': 'pgs_scanned',
  'lru_pgs': 'lru_pgs',
  'cache items': 'cache_items',
  'delta': 'delta',
  'total_scan': 'total_scan',
  'priority': 'priority',
};

const END_LABELS: Readonly<Record<string, string>> = {
  'nid': 'nid',
  'unused scan count': 'unused_scan',
  'new scan count': 'new_scan',
  'total_scan': 'total_scan',
  'last shrinker return val': 'retval',
};

const STRING_FIELDS = new Set(['gfp_flags']);
/** Longest label, in words. */
const MAX_LABEL_WORDS = 4;

function parseShrink(t: string, labels: Readonly<Record<string, string>>, required: readonly string[]): EventFields | null {
  // head: `<sym>[+off[/size]] [\[module\]] <ptr>:`
  const colon = t.indexOf(': ');
  const headEnd = colon >= 0 ? colon : t.endsWith(':') ? t.length - 1 : -1;
  if (headEnd < 0) return null;
  const head = t.slice(0, headEnd).trim();
  const sp = head.lastIndexOf(' ');
  if (sp < 0) return null;
  const shr = normalizePointer(head.slice(sp + 1));
  if (shr === null) return null;
  const out: EventFields = { shr, shrink: bareSymbol(head.slice(0, sp)) };
  const toks = t.slice(headEnd + 1).split(' ');
  let label = '';
  let words = 0;
  for (let i = 0; i < toks.length; i++) {
    const tok = toks[i]!;
    if (tok === '') continue;
    const cand = label ? label + ' ' + tok : tok;
    const key = cand.endsWith(':') ? cand.slice(0, -1) : cand;
    const field = labels[key];
    if (field !== undefined) {
      let j = i + 1;
      while (j < toks.length && toks[j] === '') j++;
      if (j >= toks.length) return null;
      const v = toks[j]!;
      if (STRING_FIELDS.has(field)) out[field] = v;
      else {
        const n = parseDecimal(v);
        if (n === null) return null;
        out[field] = n;
      }
      i = j;
      label = '';
      words = 0;
      continue;
    }
    label = cand;
    if (++words >= MAX_LABEL_WORDS) return null;
  }
  if (label !== '') return null;
  for (const k of required) if (out[k] === undefined) return null;
  return out;
}

export const parseShrinkSlabStart: FieldParser = (t) =>
  parseShrink(t, START_LABELS, ['nr_objects_to_shrink', 'cache_items', 'delta', 'total_scan']);

export const parseShrinkSlabEnd: FieldParser = (t) =>
  parseShrink(t, END_LABELS, ['unused_scan', 'new_scan', 'total_scan', 'retval']);
