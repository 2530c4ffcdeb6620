/**
 * Events printed by their fields instead of their print format:
 *
 *   trace-cmd report -R:       `shr=0xffff8881003d7f80 shrink=super_cache_scan+0x0 nid=0 nr_objects_to_shrink=30 gfp_flags=0x140dca ...`
 *   libtraceevent, when it cannot evaluate an event's print fmt (an older
 *   trace-cmd on a newer kernel): `[FAILED TO PARSE] shr=0x... shrink=... ...`
 *   the kernel's options/fields (6.x): `prev_pid=0x45b6 (17846) ...`, hex
 *   then decimal for each integer
 *
 * The keys are the format's field names, which the typed tables' columns
 * are named after (typed_tables.ts lists renamed ones). The values are the
 * record's: flags and enumerations stay numbers (`gfp_flags=0x140dca`,
 * `lru=2`), since naming them needs the kernel's format file, which text
 * does not carry. The dedicated parsers (sched.ts, shrink_slab.ts,
 * workqueue.ts) fall back to these when the printed form does not parse.
 */
import type { EventFields } from '../../decoded_event.ts';
import { kvObject } from './key_values.ts';
import type { KvSpec } from './kv_spec.ts';
import { bareSymbol, normalizePointer } from './values.ts';
import type { RangeParser } from './types.ts';

const FAILED_TO_PARSE = '[FAILED TO PARSE]';

/** `value (decimal)` of options/fields; group 1 the hex or symbol, group 2 the decimal. */
const FIELDS_MODE_VALUE = /=(0x[0-9a-f]+|[A-Za-z_][\w.]*\+0x[0-9a-f]+\/0x[0-9a-f]+) \((-?\d+)\)/g;

/**
 * The text as `key=value` pairs: libtraceevent's `[FAILED TO PARSE]` cut
 * off, and options/fields' `=0x1f (31)` read as its decimal (a pointer, a
 * hex of more than 8 digits, and a `symbol+off/size` keep their first form).
 */
export function rawFieldText(args: string): string {
  const t = args.startsWith(FAILED_TO_PARSE) ? args.slice(FAILED_TO_PARSE.length).trimStart() : args;
  return t.includes(' (') ? fieldsModeValues(t) : t;
}

/** Whether a text has options/fields' `=0x1f (31)` values: the decoder's test for that layout. */
export function hasFieldsModeValues(t: string): boolean {
  FIELDS_MODE_VALUE.lastIndex = 0;
  return FIELDS_MODE_VALUE.test(t);
}

/**
 * options/fields' `=0x1f (31)` as `=31`; a pointer (more than 8 hex
 * digits) and a `symbol+off/size` keep their first form.
 */
export function fieldsModeValues(t: string): string {
  return t.replace(FIELDS_MODE_VALUE, (_m, first: string, dec: string) =>
    first.startsWith('0x') && first.length <= 10 ? `=${dec}` : `=${first}`,
  );
}

/**
 * The fields of a raw-field text, when it holds every key in `required`
 * (else null). `strings`: keys whose values are text (task names, which
 * may hold spaces and run to the next key).
 */
export function rawFields(args: string, spec: KvSpec | undefined, required: readonly string[]): EventFields | null {
  const out = kvObject(rawFieldText(args), spec);
  if (out === null) return null;
  for (const k of required) if (out[k] === undefined) return null;
  return out;
}

/** `sym+0x0/0x80` and `0x00000000ffff...` as the printed forms give them (bare symbol, short pointer). */
export function rawSymbol(v: unknown): string | undefined {
  return typeof v === 'string' ? bareSymbol(v) : undefined;
}

export function rawPointer(v: unknown): string | undefined {
  if (typeof v === 'string') return normalizePointer(v) ?? v;
  if (typeof v === 'number') return '0x' + v.toString(16);
  return undefined;
}

/**
 * sched_switch's prev_state as the kernel prints it (include/trace/events/
 * sched.h since 4.14, and the trace.dat decoder, which evaluates that print
 * fmt): bits 0x01..0x80 are S D T t X Z P I joined by `|`, none is R, and
 * 0x100 (TASK_REPORT_MAX, preempted) adds `+`. Raw text does not say which
 * kernel wrote it; kernels before 4.14 numbered states differently
 * (0x100 was W), and their raw numbers are read with this table too.
 */
const STATE_BITS = ['S', 'D', 'T', 't', 'X', 'Z', 'P', 'I'];

export function prevStateOf(v: number): string {
  const low = v & 0xff;
  let s = '';
  if (low === 0) s = 'R';
  else {
    for (let i = 0; i < 8; i++) {
      if (low & (1 << i)) s += (s === '' ? '' : '|') + STATE_BITS[i];
    }
  }
  return v & 0x100 ? s + '+' : s;
}

/**
 * `printed`, else the same event read as raw fields: the fields `rawFields`
 * finds when all of `required` are there, passed through `fix` (to the
 * printed form's conventions: bare symbols, short pointers, state letters).
 * The raw form is tried only once the printed one failed, so the usual
 * path costs nothing more.
 */
export function orRawFields(
  printed: RangeParser,
  spec: KvSpec | undefined,
  required: readonly string[],
  fix: (f: EventFields) => EventFields | null = (f) => f,
): RangeParser {
  return (t, s, e, args, b) => {
    const f = printed(t, s, e, args, b);
    if (f !== null) return f;
    const raw = rawFields(args, spec, required);
    return raw === null ? null : fix(raw);
  };
}
