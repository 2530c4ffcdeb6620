/**
 * Which text events keep their printed argument text in `ftrace_event.raw`.
 *
 * An excerpt (server/notes/report_line.ts) prints an event's arguments as
 * `raw ?? formatArgs(name, fields)`. For most events without a typed table
 * (kmalloc's `call_site=... ptr=...`, writeback's `bdi 8:0: ino=...`, every
 * plain name=value format) the fields render back to exactly the printed
 * text, so storing that text again only costs: on a 1M-event kmem report
 * the store worker spent ~1 CPU-s and the ingest ~80 MB of peak RSS on it.
 * The model keeps `raw` only where it is needed for the excerpt to stay the
 * line as printed: the fields did not parse, or they print back otherwise
 * (a hex value kept as its number, spacing the format does not give, keys
 * the text repeats, a stack's frames). Keeping text is always exact; only
 * dropping it is checked, byte for byte, against the same rendering the
 * excerpt uses.
 *
 * The check costs about what parsing the text did when the string is built
 * (formatArgs: ~1.5 us an event, measured on fsync_xfs's writeback events),
 * so the layouts most events without a typed table have (name=value,
 * writeback's `bdi NAME: name=value`) are compared in place, field by
 * field, without building it; other formats build it. Names that never
 * print back (the first KEEP_AFTER_MISSES events of the name all differed,
 * and none matched) stop being checked: they keep their text.
 */
import { argsLayout, formatArgs } from '../../notes/report_line.ts';
import type { EventFields, FieldValue } from '../decoded_event.ts';

/** A name whose first this-many events all kept their text stops being checked (it keeps text). */
export const KEEP_AFTER_MISSES = 64;

/**
 * One per build path (the one-thread builder, a field worker): the events of
 * a name all reach the same one, in file order, so the same file keeps the
 * same texts whichever path builds it.
 */
export class KeptRaw {
  /** Per event name: events checked that printed back otherwise, or -1 once one printed back. */
  private readonly misses = new Map<string, number>();
  /** Per event name: how formatArgs lays its arguments out. */
  private readonly layouts = new Map<string, 'format' | 'bdi' | 'kv'>();

  /**
   * `raw` as the model stores it: null when `formatArgs(name, fields)` is
   * the same text (the excerpt prints it back), else the text itself.
   */
  of(name: string, raw: string | null, fields: EventFields | null): string | null {
    if (raw === null || fields === null) return raw;
    const misses = this.misses.get(name) ?? 0;
    if (misses >= KEEP_AFTER_MISSES) return raw;
    let layout = this.layouts.get(name);
    if (layout === undefined) this.layouts.set(name, (layout = argsLayout(name)));
    if (layout === 'format' ? formatArgs(name, fields) === raw : printsBack(layout, fields, raw)) {
      if (misses !== -1) this.misses.set(name, -1);
      return null;
    }
    if (misses !== -1) this.misses.set(name, misses + 1);
    return raw;
  }
}

/**
 * Whether formatArgs's `kv` / `bdi` layout of `fields` is `text`, compared in
 * place: `kv` prints every field whose value is not null as `key=value`,
 * joined by one space; `bdi`, when there is a `name` field, prints
 * `bdi NAME: ` first and leaves `name` out of the rest.
 */
function printsBack(layout: 'bdi' | 'kv', fields: EventFields, text: string): boolean {
  let at = 0;
  let skip: string | null = null;
  if (layout === 'bdi') {
    const bdi = fields.name as FieldValue | null | undefined;
    if (bdi !== undefined && bdi !== null) {
      const v = typeof bdi === 'string' ? bdi : String(bdi);
      if (!text.startsWith('bdi ', 0) || !text.startsWith(v, 4) || !text.startsWith(': ', 4 + v.length)) return false;
      at = 4 + v.length + 2;
      skip = 'name';
    }
  }
  let first = true;
  for (const key in fields) {
    if (key === skip) continue;
    const x = fields[key] as FieldValue | null | undefined;
    if (x === null || x === undefined) continue;
    if (!first) {
      if (text.charCodeAt(at) !== 32) return false;
      at++;
    }
    first = false;
    if (!text.startsWith(key, at)) return false;
    at += key.length;
    if (text.charCodeAt(at) !== 61) return false; // '='
    at++;
    const v = typeof x === 'string' ? x : String(x);
    if (!text.startsWith(v, at)) return false;
    at += v.length;
  }
  return at === text.length;
}
