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
 * field, without building it; the kmem plugin's and the page allocator's
 * formats (most events of a kmem trace) and writeback's track_foreign_dirty
 * and wbc_writepage (formatArgs was ~6% of the field worker's time on
 * sched_wq's text) are built by plain concatenation (QUICK_FORMATS); other
 * formats are built by formatArgs. Names that never
 * print back (the first KEEP_AFTER_MISSES events of the name all differed,
 * and none matched) stop being checked: they keep their text.
 */
import { argsLayout, formatArgs } from '../../notes/report_line.ts';
import type { EventFields, FieldValue } from '../decoded_event.ts';
import { KV_HEX, KV_INT, KV_NIL, type UntypedKvScan } from './fields/untyped_kv.ts';

/** A name whose first this-many events all kept their text stops being checked (it keeps text). */
export const KEEP_AFTER_MISSES = 64;

/** KeptRaw.ofScan's answers: `raw` is null, `raw` is the text, or not known without the fields (use of()). */
export const RAW_PRINTS_BACK = 0;
export const RAW_KEPT = 1;
export const RAW_UNSURE = 2;

/**
 * One per build path (the one-thread builder, a field worker): the events of
 * a name all reach the same one, in file order, so the same file keeps the
 * same texts whichever path builds it.
 */
export class KeptRaw {
  /** Per event name: how it is checked, and how many of its events printed back otherwise. */
  private readonly names = new Map<string, NameCheck>();

  /**
   * `raw` as the model stores it: null when `formatArgs(name, fields)` is
   * the same text (the excerpt prints it back), else the text itself.
   */
  of(name: string, raw: string | null, fields: EventFields | null): string | null {
    if (raw === null || fields === null) return raw;
    let check = this.names.get(name);
    if (check === undefined) this.names.set(name, (check = nameCheck(name)));
    if (check.misses >= KEEP_AFTER_MISSES) return raw;
    let same: boolean;
    if (check.layout !== 'format') same = printsBack(check.layout, fields, raw);
    else same = (check.quick?.(fields) ?? formatArgs(name, fields)) === raw;
    if (same) {
      check.misses = -1;
      return null;
    }
    if (check.misses !== -1) check.misses++;
    return raw;
  }

  /**
   * Whether of() gives every later text of the name back as it is, whatever
   * its fields: the name's first KEEP_AFTER_MISSES events all printed back
   * otherwise (of() checks no more). Once true, it stays true.
   */
  keepsAll(name: string): boolean {
    const check = this.names.get(name);
    return check !== undefined && check.misses >= KEEP_AFTER_MISSES;
  }

  /**
   * Whether of() has seen an event of the name print back: from then on its
   * state no longer changes, and it gives null for every text that prints
   * back (the text otherwise).
   */
  printedBack(name: string): boolean {
    return this.names.get(name)?.misses === -1;
  }

  /**
   * of() for an event read by UntypedKvScan (no text string, no fields
   * object): RAW_PRINTS_BACK or RAW_KEPT where of() would give null or the
   * text (and its state changes as of() changes it), RAW_UNSURE where only
   * the fields tell (the caller then takes of()). Sure for the `kv` layout
   * and the page allocator's QUICK_FORMATS rendering; `b` holds the text
   * the scan read.
   */
  ofScan(name: string, scan: UntypedKvScan, b: Uint8Array): number {
    let check = this.names.get(name);
    if (check === undefined) this.names.set(name, (check = nameCheck(name)));
    if (check.misses >= KEEP_AFTER_MISSES) return RAW_KEPT;
    if (check.kmem) {
      if (!kmemPrintsBack(scan, b)) return RAW_UNSURE;
      check.misses = -1;
      return RAW_PRINTS_BACK;
    }
    if (!scan.printsBack) return RAW_UNSURE;
    // The scan's printsBack is the pairs' `kv` layout; after `bdi NAME: `, the `bdi` layout's.
    const same = scan.bdi
      ? check.layout === 'bdi'
      : check.layout === 'kv' || (check.pageKeys !== null && pagePrintsBack(check.pageKeys, scan, b));
    if (!same) return RAW_UNSURE;
    check.misses = -1;
    return RAW_PRINTS_BACK;
  }
}

/**
 * Whether pageText() of the scanned fields is their key=value text (which
 * the scan says the text is): the same keys in pageText's order, `pfn`
 * text starting with 0x, and `page` the same text as `pfn` (pageText
 * prints pfn for both).
 */
function pagePrintsBack(pageKeys: readonly string[], scan: UntypedKvScan, b: Uint8Array): boolean {
  const keys = scan.info.keys;
  if (keys === null || keys.length !== pageKeys.length) return false;
  for (let k = 0; k < keys.length; k++) if (keys[k] !== pageKeys[k]) return false;
  const { starts, ends } = scan;
  const ps = starts[0]!;
  const fs = starts[1]!;
  const n = ends[1]! - fs;
  if (scan.kinds[1] === KV_INT || n < 2 || b[fs] !== 48 || (b[fs + 1]! | 32) !== 120) return false;
  if (ends[0]! - ps !== n) return false;
  for (let i = 0; i < n; i++) if (b[ps + i] !== b[fs + i]) return false;
  return true;
}

/**
 * Whether kmemText() of the scanned fields is the text: `(` then the
 * call_site field's text (none: empty) then `) `, then the pairs as
 * key=value text, where the kmem plugin prints `ptr` as `(nil)` when it is
 * `0x0` or 0 (and other `(nil)` fields print as `0x0`).
 */
function kmemPrintsBack(scan: UntypedKvScan, b: Uint8Array): boolean {
  const keys = scan.info.keys;
  const s = scan.textAt;
  const at = scan.pairsAt;
  if (keys === null || scan.bdi || !scan.pairsBack || at - s < 3 || b[s] !== 40 || b[at - 2] !== 41 || b[at - 1] !== 32)
    return false;
  const { kinds, starts, ends, nums } = scan;
  let site = -1;
  for (let k = 0; k < keys.length; k++) {
    const key = keys[k]!;
    const kind = kinds[k]!;
    if (key === 'ptr') {
      // The plugin's `(nil)` for 0x0 or 0: the text must be `(nil)` exactly then.
      if (kind === KV_INT ? nums[k] === 0 : kind === KV_HEX && ends[k]! - starts[k]! === 3 && b[starts[k]! + 2] === 48)
        return false;
    } else if (kind === KV_NIL) return false;
    if (key === 'call_site') site = k;
  }
  // The call site's text between the parentheses (no call_site: nothing).
  const inner = at - 2 - (s + 1);
  if (site < 0) return inner === 0;
  if (kinds[site] === KV_NIL || ends[site]! - starts[site]! !== inner) return false;
  for (let i = 0; i < inner; i++) if (b[s + 1 + i] !== b[starts[site]! + i]) return false;
  return true;
}

/** How one event name's texts are checked. */
interface NameCheck {
  /** How formatArgs lays its arguments out (report_line.ts argsLayout). */
  readonly layout: 'format' | 'bdi' | 'kv';
  /** A `format` layout's quick rendering (QUICK_FORMATS), null: formatArgs. */
  readonly quick: QuickFormat | null;
  /** The keys pageText() renders, for the names it renders (PAGE_KEYS), else null. */
  readonly pageKeys: readonly string[] | null;
  /** Events checked that printed back otherwise, or -1 once one printed back. */
  misses: number;
  /** Its `format` layout is the kmem plugin's (kmemText), checked in place by ofScan (kmemPrintsBack). */
  readonly kmem: boolean;
}

function nameCheck(name: string): NameCheck {
  const layout = argsLayout(name);
  const quick = layout === 'format' ? (QUICK_FORMATS.get(name) ?? null) : null;
  return {
    layout,
    quick,
    pageKeys: quick !== null ? (PAGE_KEYS.get(name) ?? null) : null,
    misses: 0,
    kmem: quick === kmemText,
  };
}

/**
 * Whether formatArgs's `kv` / `bdi` layout of `fields` is `text`, compared in
 * place: `kv` prints every field whose value is not null as `key=value`,
 * joined by one space; `bdi`, when there is a `name` field, prints
 * `bdi NAME: ` first and leaves `name` out of the rest.
 */
function printsBack(layout: 'bdi' | 'kv', fields: EventFields, text: string): boolean {
  if (layout === 'bdi') {
    const bdi = fields.name as FieldValue | null | undefined;
    if (bdi !== undefined && bdi !== null) {
      const v = typeof bdi === 'string' ? bdi : String(bdi);
      if (!text.startsWith('bdi ', 0) || !text.startsWith(v, 4) || !text.startsWith(': ', 4 + v.length)) return false;
      return pairsPrintBack(fields, text, 4 + v.length + 2, 'name');
    }
  }
  return pairsPrintBack(fields, text, 0, null);
}

/** Whether text[at, end) is every field but `skip` whose value is not null, as `key=value` joined by one space. */
function pairsPrintBack(fields: EventFields, text: string, at: number, skip: string | null): boolean {
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

/**
 * A report_line.ts FORMATS entry rendered the quick way: the same text
 * formatArgs gives for `fields`, built by plain concatenation (one string
 * compared with ===, cheaper than comparing piece by piece with startsWith,
 * and than the entry's own filter/map/join), or null when the values are
 * not of the form handled here (formatArgs then builds the text). Each
 * mirrors its FORMATS entry; kept_raw.test.ts checks them against
 * formatArgs itself.
 */
type QuickFormat = (fields: EventFields) => string | null;

/** kmalloc / kfree / kmem_cache_*: `(call_site) ` then every field as key=value, a NULL `ptr` as `(nil)` (report_line.ts kmem). */
const kmemText: QuickFormat = (f) => {
  let s = '(' + valueText(f.call_site) + ') ';
  let first = true;
  for (const key in f) {
    const x = f[key] as FieldValue | null | undefined;
    if (x === null || x === undefined) continue;
    const v = key === 'ptr' && (x === '0x0' || x === 0) ? '(nil)' : typeof x === 'string' ? x : String(x);
    s = first ? s + key + '=' + v : s + ' ' + key + '=' + v;
    first = false;
  }
  return s;
};

/**
 * mm_page_alloc / mm_page_free: `page=PFN pfn=PFN order=N` (then, for
 * mm_page_alloc, ` migratetype=N gfp_flags=F`), PFN in hex: handled when
 * pfn is already hex text (`0x...`, as text traces give it).
 */
function pageText(alloc: boolean): QuickFormat {
  return (f) => {
    const pfn = f.pfn;
    if (typeof pfn !== 'string' || pfn.charCodeAt(0) !== 48 || (pfn.charCodeAt(1) | 32) !== 120) return null;
    const s = 'page=' + pfn + ' pfn=' + pfn + ' order=' + valueText(f.order);
    return alloc ? s + ' migratetype=' + valueText(f.migratetype) + ' gfp_flags=' + valueText(f.gfp_flags) : s;
  };
}

/** The keys pageText() prints, in its order, by event name (KeptRaw.ofScan). */
const PAGE_KEYS: ReadonlyMap<string, readonly string[]> = new Map([
  ['mm_page_alloc', ['page', 'pfn', 'order', 'migratetype', 'gfp_flags']],
  ['mm_page_free', ['page', 'pfn', 'order']],
]);

/**
 * track_foreign_dirty: `bdi NAME[ID]: ` then every other field as
 * key=value. Handled when the bdi name is text other than a bare number
 * (report_line.ts dev() prints a number as major:minor).
 */
const foreignDirtyText: QuickFormat = (f) => {
  const name = f.name;
  if (typeof name !== 'string' || isDigits(name)) return null;
  let s = 'bdi ' + name + '[' + valueText(f.bdi_id) + ']: ';
  let first = true;
  for (const key in f) {
    if (key === 'name' || key === 'bdi_id') continue;
    const x = f[key] as FieldValue | null | undefined;
    if (x === null || x === undefined) continue;
    const v = typeof x === 'string' ? x : String(x);
    s = first ? s + key + '=' + v : s + ' ' + key + '=' + v;
    first = false;
  }
  return s;
};

/** wbc_writepage: its fixed line, the range in hex (report_line.ts hex()); null when a range value is not of a form hexText takes. */
const wbcText: QuickFormat = (f) => {
  const start = hexText(f.range_start);
  const end = hexText(f.range_end);
  if (start === null || end === null) return null;
  return (
    'bdi ' +
    valueText(f.name) +
    ': towrt=' +
    valueText(f.nr_to_write) +
    ' skip=' +
    valueText(f.pages_skipped) +
    ' mode=' +
    valueText(f.sync_mode) +
    ' kupd=' +
    valueText(f.for_kupdate) +
    ' bgrd=' +
    valueText(f.for_background) +
    ' cyclic=' +
    valueText(f.range_cyclic) +
    ' start=' +
    start +
    ' end=' +
    end +
    ' cgroup_ino=' +
    valueText(f.cgroup_ino)
  );
};

/** report_line.ts's FORMATS entries that have a quick rendering, by event name. */
const QUICK_FORMATS: ReadonlyMap<string, QuickFormat> = new Map([
  ['kmalloc', kmemText],
  ['kmem_cache_alloc', kmemText],
  ['kfree', kmemText],
  ['kmem_cache_free', kmemText],
  ['mm_page_alloc', pageText(true)],
  ['mm_page_free', pageText(false)],
  ['track_foreign_dirty', foreignDirtyText],
  ['wbc_writepage', wbcText],
]);

/**
 * report_line.ts's hex() of the values it is given here: a bigint or a safe
 * integer in hex, text already `0x...` as it is, none as ''; null for any
 * other value (formatArgs renders those).
 */
function hexText(x: FieldValue | null | undefined): string | null {
  if (x === null || x === undefined) return '';
  if (typeof x === 'bigint') return '0x' + x.toString(16);
  if (typeof x === 'number') return Number.isSafeInteger(x) ? '0x' + x.toString(16) : null;
  if (typeof x === 'string' && x.charCodeAt(0) === 48 && (x.charCodeAt(1) | 32) === 120) return x;
  return null;
}

/** Whether s is one or more ASCII digits (report_line.ts dev()'s /^\d+$/). */
function isDigits(s: string): boolean {
  if (s.length === 0) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

/** report_line.ts's str(): a value's text, '' for none. */
function valueText(x: FieldValue | null | undefined): string {
  return x === null || x === undefined ? '' : typeof x === 'string' ? x : String(x);
}
