/**
 * Writeback events (include/trace/events/writeback.h). Fields are named as
 * the format file names them (what the trace.dat decoder produces), not as
 * printed:
 *   `bdi 7:0: ...`        -> name (balance_dirty_pages, bdi_dirty_ratelimit: bdi)
 *   `bdi 254:0[9]: ...`   -> name, bdi_id (track_foreign_dirty)
 *   writeback_work_class: `sb_dev 0:0` -> sb_dev (dev_t number), kupdate= -> for_kupdate, background= -> for_background
 *   writeback_single_inode(_start): index= -> writeback_index, to_write= -> nr_to_write
 *   writeback_queue_io: enqueue= -> moved
 *   wbc_writepage: towrt/skip/mode/kupd/bgrd/cyclic/start/end -> nr_to_write/pages_skipped/sync_mode/for_kupdate/for_background/range_cyclic/range_start/range_end
 *   global_dirty_state: dirty/writeback/bg_thresh/thresh/limit/dirtied/written -> nr_dirty/nr_writeback/background_thresh/dirty_thresh/dirty_limit/nr_dirtied/nr_written
 *   writeback_inode_template: `dev 254,0 ino 1 dirtied 42 state 0x10 mode 0100644` -> dev, ino, dirtied_when, state, mode
 *   writeback_pages_written: `123` -> pages
 */
import type { EventFields, FieldValue } from '../../decoded_event.ts';
import { asciiBytes, sameBytes } from './byte_keys.ts';
import { ranged } from './generic.ts';
import { internRange } from './intern.ts';
import { addKeyValues, splitKeyValues } from './key_values.ts';
import { kvValuesBytes } from './key_values_bytes.ts';
import { type ExtraKeys, KvSpec } from './kv_spec.ts';
import { isKeyChar, trimEnd, trimStart } from './text_scan.ts';
import { parseDecimal } from './values.ts';
import { orRawFields, rawFields } from './raw_fields.ts';
import type { FieldParser } from './types.ts';

const STRINGS = new Set(['name', 'bdi', 'reason', 'state']);
const NUMERIC = new Set(['range_start', 'range_end']);

const WORK_RENAME = { kupdate: 'for_kupdate', background: 'for_background' };
const INODE_RENAME = { index: 'writeback_index', to_write: 'nr_to_write' };
const QUEUE_IO_RENAME = { enqueue: 'moved' };
const WBC_RENAME = {
  towrt: 'nr_to_write',
  skip: 'pages_skipped',
  mode: 'sync_mode',
  kupd: 'for_kupdate',
  bgrd: 'for_background',
  cyclic: 'range_cyclic',
  start: 'range_start',
  end: 'range_end',
};
const GLOBAL_RENAME = {
  dirty: 'nr_dirty',
  writeback: 'nr_writeback',
  bg_thresh: 'background_thresh',
  background: 'background_thresh',
  thresh: 'dirty_thresh',
  limit: 'dirty_limit',
  dirtied: 'nr_dirtied',
  written: 'nr_written',
};

/** `major:minor` or `major,minor` -> the kernel's dev_t (MKDEV: major << 20 | minor). */
export function devT(s: string): number | null {
  const m = /^(\d+)[:,](\d+)$/.exec(s.trim());
  if (!m) return null;
  return Number(m[1]) * 1048576 + Number(m[2]);
}

/** Parses the `bdi NAME:` / `bdi NAME[ID]:` prefix; returns the rest or null. */
function bdiPrefix(t: string, out: EventFields, nameField: string): string | null {
  if (!t.startsWith('bdi ')) return t;
  const c = t.indexOf(': ', 4);
  const end = c >= 0 ? c : t.endsWith(':') ? t.length - 1 : -1;
  if (end < 0) return null;
  let name = t.slice(4, end);
  const br = /^(.*)\[(\d+)\]$/.exec(name);
  if (br) {
    name = br[1]!;
    out.bdi_id = Number(br[2]);
  }
  out[nameField] = name;
  return t.slice(end + 1).trim();
}

/** The key=value spec of each bdiKv parser (fields/untyped_kv.ts reads its pairs as the parser does). */
export const BDI_KV_SPECS = new Map<FieldParser, KvSpec>();

function bdiKv(rename: Readonly<Record<string, string>> | undefined, nameField = 'name'): FieldParser {
  const spec = new KvSpec(rename, STRINGS, NUMERIC);
  /** The definition: any text, as a string. */
  const parse = (t: string): EventFields | null => {
    const out: EventFields = {};
    const rest = bdiPrefix(t, out, nameField);
    if (rest === null) return null;
    const { firstKeyAt } = splitKeyValues(rest);
    const pre = rest.slice(0, firstKeyAt).trim();
    if (pre.startsWith('sb_dev ')) {
      const d = devT(pre.slice(7));
      if (d === null) return null;
      out.sb_dev = d;
    } else if (pre !== '') return null;
    addKeyValues(rest.slice(firstKeyAt), out, spec);
    return out;
  };
  const leadName: ExtraKeys = { lead: [nameField], tail: [] };
  // bdiPrefix's order: the id, then the name
  const leadIdName: ExtraKeys = { lead: ['bdi_id', nameField], tail: [] };
  const lead: FieldValue[] = [];
  // The common line, on its bytes (writeback events are a fifth of an
  // fsync-heavy trace, and the string path above cost ~3 us per event):
  // `bdi NAME: k=v ...` or `bdi NAME[ID]: k=v ...` whose pairs are a key
  // sequence seen before. Anything else goes to parse().
  const parser = ranged((t, s, e, args, b) => {
    if (b === null || !t.startsWith('bdi ', s)) return parse(args);
    const colon = t.indexOf(': ', s + 4);
    if (colon < 0 || colon >= e) return parse(args);
    // NAME[ID]: the last '[' before the ']' that ends the name, digits between
    let nameEnd = colon;
    let id = -1;
    if (b[colon - 1] === 93) {
      let d = colon - 2;
      let v = 0;
      let mult = 1;
      while (d >= s + 4 && b[d]! >= 48 && b[d]! <= 57) {
        v += (b[d]! - 48) * mult;
        mult *= 10;
        d--;
      }
      const digits = colon - 2 - d;
      if (digits === 0 || digits > 15 || d < s + 4 || b[d] !== 91) return parse(args);
      id = v;
      nameEnd = d;
    }
    const rs = trimStart(t, colon + 1, e);
    const re = rs < 0 ? -1 : trimEnd(t, rs, e);
    if (re <= rs) return parse(args);
    // the pairs start right after the name (no `sb_dev` or other text first)
    let j = rs;
    while (j < re && isKeyChar(b[j]!)) j++;
    if (j === rs || j >= re || b[j] !== 61) return parse(args);
    const ent = kvValuesBytes(b, t, rs, re, spec);
    if (ent === null) return parse(args);
    const name = internRange(t, s + 4, nameEnd);
    if (id < 0) {
      lead[0] = name;
      return spec.builderWith(ent, leadName)(lead, spec.vals);
    }
    lead[0] = id;
    lead[1] = name;
    return spec.builderWith(ent, leadIdName)(lead, spec.vals);
  });
  BDI_KV_SPECS.set(parser, spec);
  return parser;
}

/** Any writeback event: `bdi X: key=value...`. */
export const parseWriteback = bdiKv(undefined);
export const parseWritebackWork = bdiKv(WORK_RENAME);
export const parseWritebackSingleInode = bdiKv(INODE_RENAME);
export const parseWritebackQueueIo = bdiKv(QUEUE_IO_RENAME);
export const parseWbcWritepage = bdiKv(WBC_RENAME);
export const parseBalanceDirtyPages = bdiKv(undefined, 'bdi');

const GLOBAL_SPEC = new KvSpec(GLOBAL_RENAME);

export const parseGlobalDirtyState: FieldParser = (t) => {
  const out: EventFields = {};
  if (addKeyValues(t, out, GLOBAL_SPEC) === 0) return null;
  return out;
};

/** writeback_inode_template: `dev 254,0 ino 9978559 dirtied 4295092856 state 0x10 mode 0100644`. */
function parseWritebackInodeText(t: string): EventFields | null {
  // `state %s` prints the flag names, and nothing when no flag is set:
  // `... state  mode 0100644` (sb_clear_inode_writeback, once written back).
  const m = /^\s*dev +(\S+) +ino +(\S+) +dirtied +(\S+) +state +(\S*?) +mode +(\S+)(?: |$)/.exec(t);
  if (m === null) return null;
  const dev = devT(m[1]!);
  const ino = parseDecimal(m[2]!);
  const dirtied = parseDecimal(m[3]!);
  const mode = /^[0-7]+$/.test(m[5]!) ? parseInt(m[5]!, 8) : null;
  if (dev === null || ino === null || dirtied === null || mode === null) return null;
  return { dev, ino, dirtied_when: dirtied, state: m[4]!, mode };
}

const INODE_WORDS = ['dev', 'ino', 'dirtied', 'state', 'mode'].map(asciiBytes);
/** Token ranges of the line being read: starts at even, ends at odd indices. */
const inodeTokens = new Int32Array(20);

/** `b[s, e)` as an unsigned decimal of at most `maxDigits` digits in base `base` (8 or 10), else -1. */
function digitsBytes(b: Uint8Array, s: number, e: number, base: number, maxDigits: number): number {
  if (e <= s || e - s > maxDigits) return -1;
  let v = 0;
  for (let i = s; i < e; i++) {
    const d = b[i]! - 48;
    if (d < 0 || d >= base) return -1;
    v = v * base + d;
  }
  return v;
}

/**
 * writeback_inode_template (sb_mark_inode_writeback, writeback_dirty_inode_enqueue...,
 * 6% of an fsync-heavy trace): the common line read on its bytes, the rest by
 * parseWritebackInodeText, the definition (which split the text with a regex,
 * ~2 us per event).
 */
export const parseWritebackInode: FieldParser = ranged(orRawFields(writebackInodeRange, undefined, ['ino']));

function writebackInodeRange(t: string, s: number, e: number, args: string, b: Uint8Array | null): EventFields | null {
  if (b === null) return parseWritebackInodeText(args);
  const a = trimStart(t, s, e);
  const z = a < 0 ? -1 : trimEnd(t, a, e);
  if (z < 0) return parseWritebackInodeText(args);
  // the first ten tokens, split at runs of spaces (as split(/ +/) does)
  const tk = inodeTokens;
  let p = a;
  let n = 0;
  while (n < 10 && p < z) {
    tk[2 * n] = p;
    while (p < z && b[p] !== 32) p++;
    tk[2 * n + 1] = p;
    n++;
    while (p < z && b[p] === 32) p++;
  }
  // Fewer words: an empty state (the text reading takes it), or not this shape.
  if (n < 10) return parseWritebackInodeText(args);
  for (let w = 0; w < 5; w++) {
    const key = INODE_WORDS[w]!;
    if (tk[4 * w + 1]! - tk[4 * w]! !== key.n || !sameBytes(b, tk[4 * w]!, key)) return null;
  }
  // dev `major:minor` or `major,minor`
  const d0 = tk[2]!;
  const d1 = tk[3]!;
  let sep = d0;
  while (sep < d1 && b[sep]! >= 48 && b[sep]! <= 57) sep++;
  const major = sep < d1 && (b[sep] === 58 || b[sep] === 44) ? digitsBytes(b, d0, sep, 10, 9) : -1;
  const minor = major < 0 ? -1 : digitsBytes(b, sep + 1, d1, 10, 9);
  const ino = digitsBytes(b, tk[6]!, tk[7]!, 10, 15);
  const dirtied = digitsBytes(b, tk[10]!, tk[11]!, 10, 15);
  const mode = digitsBytes(b, tk[18]!, tk[19]!, 8, 15);
  if (minor < 0 || ino < 0 || dirtied < 0 || mode < 0) return parseWritebackInodeText(args);
  return { dev: major * 1048576 + minor, ino, dirtied_when: dirtied, state: internRange(t, tk[14]!, tk[15]!), mode };
}

/** writeback_pages_written: just the number (raw fields: `pages=N`). */
export const parseWritebackPagesWritten: FieldParser = (t) => {
  const v = parseDecimal(t.trim());
  return v === null ? rawFields(t, undefined, ['pages']) : { pages: v };
};
