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
 * joins on sid, so readers see the same rows either way.
 */
import type { EventFields } from '../decode/decoded_event.ts';
import type { ColumnChunk } from './column_chunk.ts';

/** sids the main thread's dictionary hands out: 0, 1, 2... */
export const SID_BASE_MAIN = 0;
/** sids the field worker's dictionary hands out; above any count of distinct strings one ingest can meet. */
export const SID_BASE_FIELD_WORKER = 1 << 30;

/** [sid, string] rows of `_string`. */
export type StringRows = [number, string][];

export class ArgsRows {
  private readonly sids = new Map<string, number>();

  constructor(
    /** A chunk of the `_args` layout. */
    private readonly chunk: ColumnChunk,
    private readonly sidBase: number,
  ) {}

  /** One row per field of event `id` (its arg_set_id), in the fields' order. */
  write(id: number, fields: EventFields): void {
    const a = this.chunk;
    let index = 0;
    for (const key in fields) {
      const v = fields[key];
      a.setInt(0, id);
      a.setInt(1, index++);
      a.setInt(2, this.intern(key));
      if (typeof v === 'string') {
        a.setNull(3);
        a.setInt(4, this.intern(v));
      } else {
        a.set(3, v);
        a.setNull(4);
      }
      a.endRow();
    }
  }

  flush(): void {
    this.chunk.flush();
  }

  /** The dictionary as `_string` rows. */
  stringRows(): StringRows {
    return [...this.sids].map(([s, sid]) => [sid, s]);
  }

  private intern(s: string): number {
    let sid = this.sids.get(s);
    if (sid === undefined) {
      // The two dictionaries' sids must not meet (in practice memory runs out long before).
      if (this.sids.size >= SID_BASE_FIELD_WORKER) throw new Error(`more than ${SID_BASE_FIELD_WORKER} distinct argument strings`);
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
