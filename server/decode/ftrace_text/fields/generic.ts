/** Any event without a dedicated parser (its key=value pairs), and the range form every parser is defined by. */
import type { EventFields } from '../../decoded_event.ts';
import { kvObject } from './key_values.ts';
import { kvRangeBytes } from './key_values_bytes.ts';
import type { FieldParser, RangeParser } from './types.ts';

/** Any event without a dedicated parser: its key=value pairs, or {} if none. */
export const parseGeneric: FieldParser = (args) => kvObject(args) ?? {};

/** parseGeneric on t[s, e) (b: t's bytes when ASCII, else null). */
export function parseGenericRange(
  t: string,
  s: number,
  e: number,
  _args?: string,
  b: Uint8Array | null = null,
): EventFields {
  return kvRangeBytes(b, t, s, e) ?? {};
}

/** Range parsers of the FieldParsers made by `ranged`. */
export const RANGE_PARSERS = new Map<FieldParser, RangeParser>();

/** A FieldParser defined by its range form (one implementation for both). */
export function ranged(rp: RangeParser): FieldParser {
  const fp: FieldParser = (t) => rp(t, 0, t.length, t, null);
  RANGE_PARSERS.set(fp, rp);
  return fp;
}
