/**
 * Parses the kernel's per-event `format` text (as stored in trace.dat):
 *
 *   name: sched_switch
 *   ID: 372
 *   format:
 *   	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
 *   	...
 *   print fmt: "prev_comm=%s ...", REC->prev_comm, ...
 */

export type FieldKind =
  | 'int' // 1/2/4/8-byte integer
  | 'pointer' // any `*` type: printed as 0x-hex
  | 'string' // fixed char array, NUL-terminated
  | 'dynstring' // __data_loc / __rel_loc char[]
  | 'array' // fixed array of integers
  | 'dynarray' // __data_loc / __rel_loc array of integers
  | 'tailstring' // `char buf[]` (size 0): the text runs to the record's end (ftrace print: trace_marker messages)
  | 'tailarray' // `u32 buf[]`, `unsigned long args[]` (size 0): integers up to the record's end
  | 'opaque'; // anything else (struct by value ...): not decoded

export interface FieldDef {
  name: string;
  /** The declared type without the name, e.g. `unsigned long`, `char[16]`, `__data_loc char[]`. */
  type: string;
  offset: number;
  size: number;
  signed: boolean;
  kind: FieldKind;
  /** Element size for arrays (fixed or dynamic), else size. */
  elemSize: number;
  /** __rel_loc: the dynamic offset is relative to the end of this field. */
  relative: boolean;
}

export interface EventFormat {
  id: number;
  name: string;
  system: string;
  commonFields: FieldDef[];
  fields: FieldDef[];
  printFmt: string | null;
}

const FIELD_RE = /^\s*field:(.*?);\s*offset:(\d+);\s*size:(\d+);(?:\s*signed:(-?\d+);)?/;

export class FormatParseError extends Error {}

export function parseEventFormat(text: string, system: string): EventFormat {
  const lines = text.split('\n');
  let name: string | null = null;
  let id: number | null = null;
  const commonFields: FieldDef[] = [];
  const fields: FieldDef[] = [];
  let printFmt: string | null = null;
  let seenBlank = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.startsWith('name:')) name = line.slice(5).trim();
    else if (line.startsWith('ID:')) id = Number(line.slice(3).trim());
    else if (line.startsWith('print fmt:')) {
      // The print fmt is the rest of the text (it never spans lines in practice, but be lenient).
      printFmt = [line.slice('print fmt:'.length), ...lines.slice(i + 1)].join('\n').trim();
      break;
    } else if (/^\s*field:/.test(line)) {
      const f = parseFieldLine(line);
      if (!f) continue;
      // Common fields come first and are separated from the event's own by a blank line;
      // their names always start with common_ on modern kernels, which we rely on too.
      if (!seenBlank && f.name.startsWith('common_')) commonFields.push(f);
      else fields.push(f);
    } else if (line.trim() === '' && commonFields.length > 0) {
      seenBlank = true;
    }
  }
  if (name === null || name === '') throw new FormatParseError('format has no name');
  if (id === null || !Number.isInteger(id) || id < 0 || id > 0xffff)
    throw new FormatParseError(`format ${name} has no valid ID`);
  return { id, name, system, commonFields, fields, printFmt };
}

function parseFieldLine(line: string): FieldDef | null {
  const m = FIELD_RE.exec(line);
  if (!m) return null;
  const decl = m[1]!.trim();
  const offset = Number(m[2]);
  const size = Number(m[3]);
  const signed = m[4] !== undefined ? m[4] === '1' : false;
  // name is the last identifier, optionally followed by [N]
  const dm = /^(.*?)([A-Za-z_][A-Za-z0-9_]*)\s*(\[[^\]]*\])?\s*$/.exec(decl);
  if (!dm) return null;
  let baseType = dm[1]!.trim();
  const fieldName = dm[2]!;
  const arraySuffix = dm[3];
  const isDataLoc = /\b__data_loc\b/.test(baseType);
  const isRelLoc = /\b__rel_loc\b/.test(baseType);
  const type = arraySuffix ? `${baseType}${arraySuffix}` : baseType;
  let kind: FieldKind;
  let elemSize = size;
  if (isDataLoc || isRelLoc) {
    baseType = baseType.replace(/\b__(data|rel)_loc\b/, '').trim();
    const elemType = baseType.replace(/\[\s*\]$/, '').trim();
    if (/\bchar\b/.test(elemType)) {
      kind = 'dynstring';
      elemSize = 1;
    } else {
      kind = 'dynarray';
      elemSize = scalarSizeOf(elemType) ?? 0;
    }
  } else if (arraySuffix && arraySuffix.slice(1, -1).trim() === '' && size === 0) {
    // A flexible array member: the kernel writes as much as the record needs
    // after the fixed fields, so the declared size (0) says nothing.
    if (/\bchar\b/.test(baseType) && !baseType.includes('*')) {
      kind = 'tailstring';
      elemSize = 1;
    } else {
      kind = 'tailarray';
      // 0 for `long`: the decoder knows the file's long size.
      elemSize = scalarSizeOf(baseType) ?? 0;
    }
  } else if (arraySuffix) {
    const n = Number(arraySuffix.slice(1, -1).trim());
    if (/\bchar\b/.test(baseType) && !baseType.includes('*')) {
      kind = 'string';
      elemSize = 1;
    } else {
      kind = 'array';
      elemSize = Number.isInteger(n) && n > 0 ? size / n : (scalarSizeOf(baseType) ?? 0);
      if (![1, 2, 4, 8].includes(elemSize) && !baseType.includes('*')) kind = 'opaque';
      if (baseType.includes('*')) elemSize = Number.isInteger(n) && n > 0 ? size / n : 8;
    }
  } else if (baseType.includes('*')) {
    kind = 'pointer';
  } else if (size === 1 || size === 2 || size === 4 || size === 8) {
    kind = 'int';
  } else {
    kind = 'opaque';
  }
  return { name: fieldName, type, offset, size, signed, kind, elemSize, relative: isRelLoc };
}

function scalarSizeOf(type: string): number | null {
  const t = type
    .replace(/\b(const|volatile|unsigned|signed)\b/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  if (t.includes('*')) return null;
  switch (t) {
    case 'char':
    case 'u8':
    case 's8':
    case '__u8':
    case '__s8':
    case 'bool':
      return 1;
    case 'short':
    case 'u16':
    case 's16':
    case '__u16':
    case '__s16':
      return 2;
    case '':
    case 'int':
    case 'u32':
    case 's32':
    case '__u32':
    case '__s32':
    case 'pid_t':
      return 4;
    case 'long long':
    case 'u64':
    case 's64':
    case '__u64':
    case '__s64':
      return 8;
    default:
      return null;
  }
}

/**
 * The header_page format describes the ring-buffer page header:
 *   field: u64 timestamp; offset:0; size:8; ...
 *   field: local_t commit; offset:8; size:8; ...
 *   field: char data; offset:16; size:4080; ...
 */
export interface PageLayout {
  timestampOffset: number;
  commitOffset: number;
  commitSize: number;
  dataOffset: number;
}

export function parseHeaderPage(text: string | null, longSize: number): PageLayout {
  const fallbackCommit = longSize === 4 ? 4 : 8;
  const layout: PageLayout = {
    timestampOffset: 0,
    commitOffset: 8,
    commitSize: fallbackCommit,
    dataOffset: 8 + fallbackCommit,
  };
  if (!text) return layout;
  for (const line of text.split('\n')) {
    const m = /field:\s*(.*?)\s+(\w+);\s*offset:(\d+);\s*size:(\d+);/.exec(line);
    if (!m) continue;
    const [, , name, off, size] = m;
    if (name === 'timestamp') layout.timestampOffset = Number(off);
    else if (name === 'commit') {
      layout.commitOffset = Number(off);
      layout.commitSize = Number(size);
    } else if (name === 'data') layout.dataOffset = Number(off);
  }
  return layout;
}
