/**
 * Rows of `_args` (one per field of an event without a typed table) and the
 * string dictionary their keys and text values are interned in.
 *
 * Two threads write args: the builder (main thread) for the events it
 * decodes itself, and the field worker for the text events it parses. Each
 * keeps its own dictionary, so each numbers its strings from its own base
 * (SID_BASE_MAIN, SID_BASE_FIELD_WORKER): the store writes both dictionaries
 * into `_string` as they are, with no renumbering of rows already appended.
 * A string both threads met is stored twice, once per sid; the `args` view
 * joins on sid, so readers see the same rows either way. Each dictionary is
 * capped (MAX_INTERNED), which also keeps the two ranges apart.
 */
import type { EventFields } from '../decode/decoded_event.ts';
import type { ColumnChunk } from './column_chunk.ts';

/** sids the main thread's dictionary hands out: 0, 1, 2... */
export const SID_BASE_MAIN = 0;
/** sids the field worker's dictionary hands out: far above the main thread's (at most MAX_INTERNED of them). */
export const SID_BASE_FIELD_WORKER = 1 << 30;

/**
 * Strings a dictionary holds at most. Beyond that, strings it does not hold
 * are written in the row (`_args.key_str`, `_args.str`): a kmem trace has a
 * distinct pointer per event, and a dictionary of them grew an ingest of 2M
 * kmalloc events to 1.4 GB. The strings worth interning (field names, flags,
 * symbols) are met early and repeat.
 */
export const MAX_INTERNED = 1 << 18;

/** [sid, string] rows of `_string`. */
export type StringRows = [number, string][];

/** `_args` columns (model_store.ts ARGS_COLUMNS). */
const ARG_SET_ID = 0;
const ARG_INDEX = 1;
const KEY_SID = 2;
const INT_VALUE = 3;
const STRING_SID = 4;
const KEY_STR = 5;
const STR = 6;

export class ArgsRows {
  private readonly sids = new Map<string, number>();

  constructor(
    /** A chunk of the `_args` layout. */
    private readonly chunk: ColumnChunk,
    private readonly sidBase: number,
    private readonly maxInterned = MAX_INTERNED,
  ) {}

  /** One row per field of event `id` (its arg_set_id), in the fields' order. */
  write(id: number, fields: EventFields): void {
    const a = this.chunk;
    let index = 0;
    for (const key in fields) {
      const v = fields[key];
      a.startRow();
      a.setInt(ARG_SET_ID, id);
      a.setInt(ARG_INDEX, index++);
      this.setString(KEY_SID, KEY_STR, key);
      if (typeof v === 'string') {
        a.setNull(INT_VALUE);
        this.setString(STRING_SID, STR, v);
      } else {
        a.set(INT_VALUE, v);
        a.setNull(STRING_SID);
        a.setNull(STR);
      }
      a.endRow();
    }
  }

  /** `s` in column sidCol as its sid when interned, else in column strCol as itself; the other column NULL. */
  private setString(sidCol: number, strCol: number, s: string): void {
    const a = this.chunk;
    const sid = this.intern(s);
    if (sid >= 0) {
      a.setInt(sidCol, sid);
      a.setNull(strCol);
    } else {
      a.setNull(sidCol);
      a.set(strCol, s);
    }
  }

  flush(): void {
    this.chunk.flush();
  }

  /** The dictionary as `_string` rows. */
  stringRows(): StringRows {
    return [...this.sids].map(([s, sid]) => [sid, s]);
  }

  /** The string's sid, or -1 when the dictionary is full and does not hold it (the row then holds the string). */
  private intern(s: string): number {
    let sid = this.sids.get(s);
    if (sid === undefined) {
      if (this.sids.size >= this.maxInterned) return -1;
      sid = this.sidBase + this.sids.size;
      this.sids.set(s, sid);
    }
    return sid;
  }
}

/** Whether an event's fields have any key (an event with none gets no args rows and a NULL arg_set_id). */
export function hasArgs(fields: EventFields | null): fields is EventFields {
  if (fields === null) return false;
  for (const _ in fields) return true;
  return false;
}
