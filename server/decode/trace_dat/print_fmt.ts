/**
 * Understands an event's `print fmt:` just enough to print fields the way
 * trace-cmd (libtraceevent) prints them:
 *   - which fields are printed with %pS/%ps/%pf/%pF (-> kallsyms symbol),
 *   - which are plain %p pointers (-> 0x hex),
 *   - which are printed through __print_flags / __print_symbolic, possibly
 *     inside ternaries and split over adjacent %s conversions
 *     (sched_switch `prev_state=%s%s` gives `R+`), and how to render them.
 *
 * The flag tables are C constant expressions after macro expansion, e.g.
 * `(unsigned long)((( gfp_t)(0x400u|0x800u))|...)`, so this file contains a
 * small C expression parser and a 64-bit evaluator (bigint: only run at setup
 * and on render-cache misses, never per event).
 */

type Tok = { t: 'num'; v: bigint } | { t: 'str'; v: string } | { t: 'id'; v: string } | { t: 'p'; v: string };

export type Node =
  | { k: 'num'; v: bigint }
  | { k: 'str'; v: string }
  | { k: 'null' }
  | { k: 'field'; name: string }
  | { k: 'id'; name: string }
  | { k: 'call'; name: string; args: Node[] }
  | { k: 'un'; op: string; e: Node }
  | { k: 'bin'; op: string; l: Node; r: Node }
  | { k: 'tern'; c: Node; t: Node; f: Node }
  | { k: 'cast'; type: string; e: Node }
  | { k: 'list'; items: Node[] }
  | { k: 'member'; e: Node; name: string }
  | { k: 'index'; e: Node; i: Node };

const U64 = (1n << 64n) - 1n;

const PUNCT = ['<<=', '>>=', '...', '->', '<<', '>>', '<=', '>=', '==', '!=', '&&', '||', '++', '--'];

function isIdentChar(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
}

export function tokenize(src: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  const n = src.length;
  while (i < n) {
    const c = src[i]!;
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++;
      continue;
    }
    if (c === '"') {
      let s = '';
      i++;
      while (i < n && src[i] !== '"') {
        if (src[i] === '\\' && i + 1 < n) {
          const e = src[i + 1]!;
          i += 2;
          if (e === 'n') s += '\n';
          else if (e === 't') s += '\t';
          else if (e === 'r') s += '\r';
          else if (e === '0' || (e >= '1' && e <= '7')) {
            let oct = e;
            while (oct.length < 3 && i < n && src[i]! >= '0' && src[i]! <= '7') oct += src[i++];
            s += String.fromCharCode(parseInt(oct, 8));
          } else if (e === 'x') {
            let hex = '';
            while (hex.length < 2 && i < n && /[0-9a-fA-F]/.test(src[i]!)) hex += src[i++];
            s += String.fromCharCode(parseInt(hex || '0', 16));
          } else s += e;
        } else s += src[i++];
      }
      i++;
      // C concatenates adjacent string literals
      const prev = out[out.length - 1];
      if (prev && prev.t === 'str') prev.v += s;
      else out.push({ t: 'str', v: s });
      continue;
    }
    if (c === "'") {
      // character constant
      let j = i + 1;
      let v = 0;
      if (src[j] === '\\') {
        const e = src[j + 1];
        v = e === 'n' ? 10 : e === 't' ? 9 : e === '0' ? 0 : (e ?? '').charCodeAt(0);
        j += 2;
      } else {
        v = (src[j] ?? '').charCodeAt(0);
        j++;
      }
      i = j + 1;
      out.push({ t: 'num', v: BigInt(v) });
      continue;
    }
    const cc = c.charCodeAt(0);
    if (cc >= 48 && cc <= 57) {
      const m = /^(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)([uUlL]*)/.exec(src.slice(i, i + 40));
      if (m) {
        const lit = m[1]!;
        let v: bigint;
        if (/^0[xX]/.test(lit)) v = BigInt(lit);
        else if (lit.length > 1 && lit[0] === '0') v = BigInt('0o' + lit.slice(1));
        else v = BigInt(lit);
        out.push({ t: 'num', v });
        i += m[0].length;
        continue;
      }
    }
    if ((cc >= 65 && cc <= 90) || (cc >= 97 && cc <= 122) || cc === 95) {
      let j = i + 1;
      while (j < n && isIdentChar(src.charCodeAt(j))) j++;
      out.push({ t: 'id', v: src.slice(i, j) });
      i = j;
      continue;
    }
    let p = c;
    for (const cand of PUNCT) {
      if (src.startsWith(cand, i)) {
        p = cand;
        break;
      }
    }
    out.push({ t: 'p', v: p });
    i += p.length;
  }
  return out;
}

const TYPE_WORDS = new Set([
  'unsigned',
  'signed',
  'int',
  'long',
  'short',
  'char',
  'void',
  'bool',
  '_Bool',
  'const',
  'volatile',
  'u8',
  'u16',
  'u32',
  'u64',
  's8',
  's16',
  's32',
  's64',
  '__u8',
  '__u16',
  '__u32',
  '__u64',
  '__s8',
  '__s16',
  '__s32',
  '__s64',
  'struct',
  'enum',
  'union',
]);

function isTypeWord(w: string): boolean {
  return TYPE_WORDS.has(w) || /_t$/.test(w);
}

const BIN_PREC: Record<string, number> = {
  '||': 1,
  '&&': 2,
  '|': 3,
  '^': 4,
  '&': 5,
  '==': 6,
  '!=': 6,
  '<': 7,
  '>': 7,
  '<=': 7,
  '>=': 7,
  '<<': 8,
  '>>': 8,
  '+': 9,
  '-': 9,
  '*': 10,
  '/': 10,
  '%': 10,
};

export class Parser {
  private i = 0;
  constructor(private readonly toks: Tok[]) {}

  get done(): boolean {
    return this.i >= this.toks.length;
  }

  private peek(o = 0): Tok | undefined {
    return this.toks[this.i + o];
  }

  private isP(v: string, o = 0): boolean {
    const t = this.peek(o);
    return t !== undefined && t.t === 'p' && t.v === v;
  }

  private expectP(v: string): void {
    if (!this.isP(v)) throw new Error(`expected ${v}`);
    this.i++;
  }

  eatP(v: string): boolean {
    if (this.isP(v)) {
      this.i++;
      return true;
    }
    return false;
  }

  /** Comma-separated top-level expressions until the end. */
  parseList(): Node[] {
    const items: Node[] = [];
    while (!this.done) {
      items.push(this.parseExpr());
      if (!this.eatP(',')) break;
    }
    if (!this.done) throw new Error('trailing tokens');
    return items;
  }

  parseExpr(): Node {
    return this.parseTernary();
  }

  private parseTernary(): Node {
    const c = this.parseBin(1);
    if (this.eatP('?')) {
      const t = this.parseExpr();
      this.expectP(':');
      const f = this.parseTernary();
      return { k: 'tern', c, t, f };
    }
    return c;
  }

  private parseBin(minPrec: number): Node {
    let l = this.parseUnary();
    for (;;) {
      const t = this.peek();
      if (!t || t.t !== 'p') break;
      const prec = BIN_PREC[t.v];
      if (prec === undefined || prec < minPrec) break;
      this.i++;
      const r = this.parseBin(prec + 1);
      l = { k: 'bin', op: t.v, l, r };
    }
    return l;
  }

  /** `( type-words [*]* )` at the current position: returns the type text and its token length. */
  private castAhead(): { type: string; len: number } | null {
    if (!this.isP('(')) return null;
    let j = 1;
    const words: string[] = [];
    for (;;) {
      const t = this.peek(j);
      if (!t) return null;
      if (t.t === 'id') {
        words.push(t.v);
        j++;
      } else if (t.t === 'p' && t.v === '*') {
        words.push('*');
        j++;
      } else break;
    }
    if (!this.isP(')', j) || words.length === 0) return null;
    const first = words[0]!;
    const ok = words.every(
      (w) => w === '*' || isTypeWord(w) || words[0] === 'struct' || words[0] === 'enum' || words[0] === 'union',
    );
    if (!ok || first === '*') return null;
    return { type: words.join(' '), len: j + 1 };
  }

  private parseUnary(): Node {
    const t = this.peek();
    if (!t) throw new Error('unexpected end');
    if (t.t === 'p') {
      if (t.v === '-' || t.v === '+' || t.v === '~' || t.v === '!' || t.v === '*' || t.v === '&') {
        this.i++;
        return { k: 'un', op: t.v, e: this.parseUnary() };
      }
      const cast = this.castAhead();
      if (cast) {
        this.i += cast.len;
        return { k: 'cast', type: cast.type, e: this.parseUnary() };
      }
    }
    if (t.t === 'id' && t.v === 'sizeof') {
      this.i++;
      const cast = this.castAhead();
      if (cast) {
        this.i += cast.len;
        return { k: 'call', name: 'sizeof', args: [] };
      }
      return { k: 'call', name: 'sizeof', args: [this.parseUnary()] };
    }
    return this.parsePostfix();
  }

  private parsePostfix(): Node {
    let e = this.parsePrimary();
    for (;;) {
      if (this.isP('->') || this.isP('.')) {
        this.i++;
        const name = this.peek();
        if (!name || name.t !== 'id') throw new Error('expected member name');
        this.i++;
        if (e.k === 'id' && e.name === 'REC') e = { k: 'field', name: name.v };
        else e = { k: 'member', e, name: name.v };
      } else if (this.isP('[')) {
        this.i++;
        const idx = this.parseExpr();
        this.expectP(']');
        e = { k: 'index', e, i: idx };
      } else if (this.isP('(') && e.k === 'id') {
        this.i++;
        const args: Node[] = [];
        if (!this.isP(')')) {
          for (;;) {
            args.push(this.parseExpr());
            if (!this.eatP(',')) break;
          }
        }
        this.expectP(')');
        e = { k: 'call', name: e.name, args };
      } else break;
    }
    return e;
  }

  private parsePrimary(): Node {
    const t = this.peek();
    if (!t) throw new Error('unexpected end');
    this.i++;
    if (t.t === 'num') return { k: 'num', v: t.v };
    if (t.t === 'str') return { k: 'str', v: t.v };
    if (t.t === 'id') return { k: 'id', name: t.v };
    if (t.v === '(') {
      const e = this.parseExpr();
      // GNU statement expressions / comma expressions are not expected; be strict.
      this.expectP(')');
      return e;
    }
    if (t.v === '{') {
      const items: Node[] = [];
      if (!this.isP('}')) {
        for (;;) {
          items.push(this.parseExpr());
          if (!this.eatP(',')) break;
          if (this.isP('}')) break;
        }
      }
      this.expectP('}');
      return { k: 'list', items };
    }
    throw new Error(`unexpected ${t.v}`);
  }
}

/** Parses and evaluates a C integer constant expression, e.g. `(unsigned long)((1UL << 10)|0x800u)`. */
export function evalConstExpr(src: string): bigint | null {
  try {
    const p = new Parser(tokenize(src));
    const node = p.parseExpr();
    if (!p.done) return null;
    const v = evaluate(node, noFields);
    return typeof v === 'bigint' ? v : null;
  } catch {
    return null;
  }
}

export type Value = bigint | string | null | undefined;
export type FieldLookup = (name: string) => bigint | string | undefined;
const noFields: FieldLookup = () => undefined;

function truthy(v: Value): boolean {
  if (typeof v === 'bigint') return v !== 0n;
  return v !== null && v !== undefined;
}

function toU64(v: bigint): bigint {
  return v & U64;
}

/**
 * Evaluates an expression node; undefined when the value cannot be computed
 * here. `ids`: the value of a name the kernel left unresolved (undefined:
 * none, the expression cannot be computed).
 */
export function evaluate(node: Node, field: FieldLookup, ids?: bigint): Value {
  const ev = (n: Node) => evaluate(n, field, ids);
  switch (node.k) {
    case 'num':
      return node.v;
    case 'str':
      return node.v;
    case 'null':
      return null;
    case 'field':
      return field(node.name);
    case 'id':
      return ids;
    case 'cast': {
      const v = ev(node.e);
      if (typeof v !== 'bigint') {
        // `((void *)0)` is the NULL that ends flag tables
        if (v === undefined && node.type.includes('*')) return undefined;
        return v;
      }
      return castValue(node.type, v);
    }
    case 'un': {
      const v = ev(node.e);
      if (node.op === '!') return v === undefined ? undefined : truthy(v) ? 0n : 1n;
      if (typeof v !== 'bigint') return undefined;
      if (node.op === '-') return toU64(-v);
      if (node.op === '+') return v;
      if (node.op === '~') return toU64(~v);
      return undefined;
    }
    case 'bin': {
      if (node.op === '&&' || node.op === '||') {
        const l = ev(node.l);
        if (l === undefined) return undefined;
        if (node.op === '&&' && !truthy(l)) return 0n;
        if (node.op === '||' && truthy(l)) return 1n;
        const r = ev(node.r);
        return r === undefined ? undefined : truthy(r) ? 1n : 0n;
      }
      const l = ev(node.l);
      const r = ev(node.r);
      if (typeof l !== 'bigint' || typeof r !== 'bigint') {
        if ((node.op === '==' || node.op === '!=') && typeof l === 'string' && typeof r === 'string') {
          return (l === r) === (node.op === '==') ? 1n : 0n;
        }
        return undefined;
      }
      switch (node.op) {
        case '|':
          return l | r;
        case '&':
          return l & r;
        case '^':
          return l ^ r;
        case '+':
          return toU64(l + r);
        case '-':
          return toU64(l - r);
        case '*':
          return toU64(l * r);
        case '/':
          return r === 0n ? undefined : l / r;
        case '%':
          return r === 0n ? undefined : l % r;
        case '<<':
          return r >= 64n ? 0n : toU64(l << r);
        case '>>':
          return r >= 64n ? 0n : l >> r;
        case '==':
          return l === r ? 1n : 0n;
        case '!=':
          return l !== r ? 1n : 0n;
        case '<':
          return l < r ? 1n : 0n;
        case '>':
          return l > r ? 1n : 0n;
        case '<=':
          return l <= r ? 1n : 0n;
        case '>=':
          return l >= r ? 1n : 0n;
        default:
          return undefined;
      }
    }
    case 'tern': {
      const c = ev(node.c);
      if (c === undefined) return undefined;
      return ev(truthy(c) ? node.t : node.f);
    }
    case 'call': {
      if (node.name === '__print_flags') return printFlags(node, field);
      if (node.name === '__print_symbolic') return printSymbolic(node, field);
      return undefined;
    }
    default:
      return undefined;
  }
}

function castValue(type: string, v: bigint): bigint {
  // Values are carried as unsigned 64-bit; narrowing casts truncate like C does.
  const t = type.replace(/\b(const|volatile)\b/g, '').trim();
  if (t.includes('*')) return toU64(v);
  if (/^(unsigned )?char$|^(u8|__u8|s8|__s8|bool|_Bool)$/.test(t))
    return toU64(/^(u8|__u8|unsigned char|bool|_Bool)$/.test(t) ? v & 0xffn : BigInt.asIntN(8, v));
  if (/short|^(u16|__u16|s16|__s16)$/.test(t))
    return toU64(/unsigned|u16/.test(t) ? v & 0xffffn : BigInt.asIntN(16, v));
  if (/^(unsigned( int)?|u32|__u32|uint32_t|gfp_t|unsigned int)$/.test(t)) return v & 0xffffffffn;
  if (/^(int|signed|signed int|s32|__s32|int32_t|pid_t)$/.test(t)) return toU64(BigInt.asIntN(32, v));
  return toU64(v);
}

/**
 * A flags/symbol table entry: `{ value, "NAME" }`. value null: a bare name
 * the kernel left unresolved (an enum member without TRACE_DEFINE_ENUM).
 */
interface TableEntry {
  value: bigint | null;
  name: string;
}

const tableCache = new WeakMap<Node, TableEntry[]>();

function tableOf(node: Node & { k: 'call' }, from: number): TableEntry[] {
  const cached = tableCache.get(node);
  if (cached) return cached;
  const entries: TableEntry[] = [];
  for (const item of node.args.slice(from)) {
    if (item.k !== 'list' || item.items.length < 2) continue;
    const s = evaluate(item.items[1]!, noFields);
    // `{ 0, ((void *)0) }` terminates kernel tables: stop like the kernel does.
    if (typeof s !== 'string') break;
    // Names the kernel left unresolved, as libtraceevent reads them: a bare
    // name (`{ I_DIRTY_SYNC, "I_DIRTY_SYNC" }`, `{ IOPRIO_CLASS_NONE, "none" }`)
    // stays unresolved (trace-cmd prints a __print_symbolic of it as hex,
    // `mode=0x0`); inside an expression it counts 0, as strtoull reads it
    // (`{(1 << VMSCAN_THROTTLE_WRITEBACK), "VMSCAN_THROTTLE_WRITEBACK"}` is 1).
    const first = item.items[0]!;
    if (unwrap(first).k === 'id') {
      entries.push({ value: null, name: s });
      continue;
    }
    const v = evaluate(first, noFields, 0n);
    entries.push({ value: typeof v === 'bigint' ? toU64(v) : 0n, name: s });
  }
  tableCache.set(node, entries);
  return entries;
}

/** libtraceevent's __print_flags: matched names joined by delim, leftover bits as 0x.. */
function printFlags(node: Node & { k: 'call' }, field: FieldLookup): Value {
  if (node.args.length < 2) return undefined;
  let val = evaluate(node.args[0]!, field);
  if (typeof val !== 'bigint') return undefined;
  val = toU64(val);
  const delimV = evaluate(node.args[1]!, noFields);
  const delim = typeof delimV === 'string' ? delimV : '';
  let out = '';
  let printed = false;
  for (const e of tableOf(node, 2)) {
    // An unresolved name counts 0 here (trace-cmd prints `state=I_DIRTY_SYNC` for 0).
    const ev = e.value ?? 0n;
    // libtraceevent: a zero value prints the first zero-valued entry, if any
    if (val === 0n && ev === 0n) {
      out += e.name;
      break;
    }
    if (ev !== 0n && (val & ev) === ev) {
      if (printed) out += delim;
      out += e.name;
      printed = true;
      val &= ~ev;
    }
  }
  if (val !== 0n) {
    if (printed) out += delim;
    out += '0x' + val.toString(16);
  }
  return out;
}

function printSymbolic(node: Node & { k: 'call' }, field: FieldLookup): Value {
  if (node.args.length < 1) return undefined;
  let val = evaluate(node.args[0]!, field);
  if (typeof val !== 'bigint') return undefined;
  val = toU64(val);
  for (const e of tableOf(node, 1)) if (e.value !== null && e.value === val) return e.name;
  return '0x' + val.toString(16);
}

// ---------------------------------------------------------------------------
// Print fmt analysis
// ---------------------------------------------------------------------------

interface Conversion {
  /** Literal text between the previous conversion and this one. */
  before: string;
  /** Conversion character: d, u, x, s, p, ... */
  spec: string;
  /** %p extension letters (S, s, f, F, x, K, ...), '' otherwise. */
  ext: string;
  /** Flag characters (`#`, `0`, `-`, ...). */
  flags: string;
  arg: Node | null;
}

/** Renders the printed value of one field from its raw (u64) value. */
export interface SymbolicRenderer {
  (raw: bigint): string | undefined;
  /**
   * For hex renderers computed on numbers (`0x%lx` of a conditional): for a
   * raw value that is a whole number in [0, 2^53), the number whose hex
   * digits the text is (`0x` and lowercase hex), without bigint
   * arithmetic; absent when the renderer has none.
   */
  hexOfNumber?: (raw: number) => number;
}

export interface PrintFmtInfo {
  /** Fields printed as kernel symbols (%pS, %ps, %pf, %pF, %pB). */
  symbolFields: Set<string>;
  /** Of those, the ones printed with the offset into the symbol (%pS, %pF, %pB: `func+0x45`). */
  symbolOffsetFields: Set<string>;
  /** Fields printed as they are by an integer conversion (%d, %u, %lx, ...), whatever else prints them. */
  numericFields: Set<string>;
  /** Fields printed as they are in hex with a 0x before them (`0x%lx`, `%#x`). */
  hexFields: Set<string>;
  /**
   * The printed text of fields printed through __print_flags,
   * __print_symbolic or conditionals that give words
   * (`REC->accounted ? "true" : "false"`): a superset of `symbolic`, for
   * the printed form of fields (see event_decoder.ts, asPrinted).
   */
  printedText: Map<string, SymbolicRenderer>;
  /** Fields printed as plain pointers (%p, %px, %pK). */
  pointerFields: Set<string>;
  /** Fields printed through __print_flags / __print_symbolic. */
  symbolic: Map<string, SymbolicRenderer>;
}

const CONV_RE = /%([-+ #0]*)(\*|\d+)?(?:\.(\*|\d+))?(hh|h|ll|l|L|z|Z|j|t)?([diouxXcspneEfgG%])/g;
const P_EXT = 'SsfFBKxMmIiUhbEdDaNgRrV';

function parseConversions(fmt: string, args: Node[]): Conversion[] {
  const convs: Conversion[] = [];
  let argIdx = 0;
  let last = 0;
  let before = '';
  CONV_RE.lastIndex = 0;
  for (let m = CONV_RE.exec(fmt); m; m = CONV_RE.exec(fmt)) {
    const spec = m[5]!;
    if (spec === '%') continue;
    before += fmt.slice(last, m.index);
    let end = m.index + m[0].length;
    let ext = '';
    if (spec === 'p') {
      const c = fmt[end];
      if (c && P_EXT.includes(c)) {
        ext = c;
        end++;
      }
    }
    if (m[2] === '*') argIdx++;
    if (m[3] === '*') argIdx++;
    convs.push({ before, spec, ext, flags: m[1] ?? '', arg: args[argIdx] ?? null });
    argIdx++;
    before = '';
    last = end;
    CONV_RE.lastIndex = end;
  }
  return convs;
}

function unwrap(n: Node): Node {
  while (n.k === 'cast') n = n.e;
  return n;
}

function fieldRefs(n: Node, out: Set<string>): Set<string> {
  switch (n.k) {
    case 'field':
      out.add(n.name);
      break;
    case 'call':
      for (const a of n.args) fieldRefs(a, out);
      break;
    case 'un':
    case 'cast':
      fieldRefs(n.e, out);
      break;
    case 'bin':
      fieldRefs(n.l, out);
      fieldRefs(n.r, out);
      break;
    case 'tern':
      fieldRefs(n.c, out);
      fieldRefs(n.t, out);
      fieldRefs(n.f, out);
      break;
    case 'list':
      for (const a of n.items) fieldRefs(a, out);
      break;
    case 'member':
      fieldRefs(n.e, out);
      break;
    case 'index':
      fieldRefs(n.e, out);
      fieldRefs(n.i, out);
      break;
    default:
      break;
  }
  return out;
}

/** Whether n gives words by a conditional: `c ? "true" : "false"`, `c ? "M" : " "`. */
function hasStringChoice(n: Node): boolean {
  switch (n.k) {
    case 'tern':
      return unwrap(n.t).k === 'str' || unwrap(n.f).k === 'str' || hasStringChoice(n.t) || hasStringChoice(n.f);
    case 'cast':
      return hasStringChoice(n.e);
    default:
      return false;
  }
}

function hasSymbolicCall(n: Node): boolean {
  switch (n.k) {
    case 'call':
      return n.name === '__print_flags' || n.name === '__print_symbolic' || n.args.some(hasSymbolicCall);
    case 'un':
    case 'cast':
      return hasSymbolicCall(n.e);
    case 'bin':
      return hasSymbolicCall(n.l) || hasSymbolicCall(n.r);
    case 'tern':
      return hasSymbolicCall(n.c) || hasSymbolicCall(n.t) || hasSymbolicCall(n.f);
    default:
      return false;
  }
}

export function analyzePrintFmt(printFmt: string | null): PrintFmtInfo {
  const info: PrintFmtInfo = {
    symbolFields: new Set(),
    symbolOffsetFields: new Set(),
    numericFields: new Set(),
    hexFields: new Set(),
    printedText: new Map(),
    pointerFields: new Set(),
    symbolic: new Map(),
  };
  if (!printFmt) return info;
  let items: Node[];
  try {
    items = new Parser(tokenize(printFmt)).parseList();
  } catch {
    return info;
  }
  const fmtNode = items[0];
  if (!fmtNode || fmtNode.k !== 'str') return info;
  const convs = parseConversions(fmtNode.v, items.slice(1));

  for (const c of convs) {
    if (!c.arg) continue;
    const u = unwrap(c.arg);
    const hex = (c.spec === 'x' || c.spec === 'X') && (c.flags.includes('#') || /0x$/i.test(c.before));
    if (u.k !== 'field') {
      // `pfn=0x%lx` of `REC->pfn != -1UL ? REC->pfn : 0`: hex text computed from one field.
      const refs = hex ? fieldRefs(u, new Set()) : null;
      if (refs !== null && refs.size === 1) {
        const owner = refs.values().next().value as string;
        if (!info.printedText.has(owner)) info.printedText.set(owner, makeHexRenderer(owner, u));
      }
      continue;
    }
    if ('diouxX'.includes(c.spec)) {
      info.numericFields.add(u.name);
      if (hex) info.hexFields.add(u.name);
    }
    if (c.spec !== 'p') continue;
    if ('SsfFB'.includes(c.ext) && c.ext !== '') {
      info.symbolFields.add(u.name);
      if ('SFB'.includes(c.ext)) info.symbolOffsetFields.add(u.name);
    } else if (c.ext === '' || c.ext === 'x' || c.ext === 'K') info.pointerFields.add(u.name);
  }

  // Group adjacent %s conversions (nothing printed between them) computed from one field.
  for (let i = 0; i < convs.length; i++) {
    const c = convs[i]!;
    const owner = stringPartOwner(c);
    if (owner === null) continue;
    const group: Node[] = [c.arg!];
    let j = i + 1;
    while (j < convs.length && convs[j]!.before === '' && stringPartOwner(convs[j]!) === owner) {
      group.push(convs[j]!.arg!);
      j++;
    }
    if (group.some(hasSymbolicCall) && !info.symbolic.has(owner)) {
      info.symbolic.set(owner, makeRenderer(owner, group));
    }
    if (group.some((n) => hasSymbolicCall(n) || hasStringChoice(n)) && !info.printedText.has(owner)) {
      // Without trailing spaces, as a text value ends (`flags=Ma bd ` of mm_lru_insertion reads `Ma bd`).
      const render = makeRenderer(owner, group);
      info.printedText.set(owner, (raw) => render(raw)?.replace(/ +$/, ''));
    }
    i = j - 1;
  }
  return info;
}

/** The one field a %s conversion's expression is computed from, or null. */
function stringPartOwner(c: Conversion): string | null {
  if (c.spec !== 's' || !c.arg) return null;
  if (unwrap(c.arg).k === 'field') return null;
  const refs = fieldRefs(c.arg, new Set());
  if (refs.size !== 1) return null;
  return refs.values().next().value as string;
}

/**
 * `n` with each subtree that reads no field replaced by its value (a number
 * or a string), so a renderer evaluates per event only what depends on the
 * event: `REC->pfn != -1UL ? REC->pfn : 0` keeps the comparison and the
 * branches, not the negation and the suffix cast of -1UL. evaluate() is
 * pure on such subtrees and renderers pass no value for unresolved names
 * (a subtree needing one gives undefined and is kept), so the value is the
 * one each event would compute. Calls are kept whole: __print_flags and
 * __print_symbolic read their tables as nodes.
 */
export function foldConstants(n: Node): Node {
  switch (n.k) {
    case 'num':
    case 'str':
    case 'null':
    case 'field':
    case 'id':
    case 'call':
    case 'list':
      return n;
    default:
      break;
  }
  if (fieldRefs(n, new Set()).size === 0) {
    const v = evaluate(n, noFields);
    if (typeof v === 'bigint') return { k: 'num', v };
    if (typeof v === 'string') return { k: 'str', v };
    return n;
  }
  switch (n.k) {
    case 'un':
      return { ...n, e: foldConstants(n.e) };
    case 'cast':
      return { ...n, e: foldConstants(n.e) };
    case 'bin':
      return { ...n, l: foldConstants(n.l), r: foldConstants(n.r) };
    case 'tern':
      return { ...n, c: foldConstants(n.c), t: foldConstants(n.t), f: foldConstants(n.f) };
    default:
      return n;
  }
}

function makeHexRenderer(fieldName: string, unfolded: Node): SymbolicRenderer {
  const expr = foldConstants(unfolded);
  const render: SymbolicRenderer = (raw: bigint) => {
    const v = evaluate(expr, (name) => (name === fieldName ? raw : undefined));
    return typeof v === 'bigint' ? '0x' + v.toString(16) : undefined;
  };
  // mm_page_alloc (most of a kmem recording) prints a new pfn each event:
  // evaluating its BigInt tree per event was the field worker's top cost.
  const numeric = compileNumeric(expr, fieldName);
  if (numeric !== null) render.hexOfNumber = numeric;
  return render;
}

/** A compiled expression of one field's value; see compileNumeric. */
type NumericFn = (x: number) => number;

/** The C casts that leave a u64 value as it is (pointers, longs, u64): castValue changes this probe under any narrower type. */
const WIDE_CAST_PROBE = (1n << 48n) + 0x80808080n;

/**
 * `n` (folded) as a function of field `fieldName`'s value x, for x a whole
 * number in [0, 2^53): what evaluate() computes, on numbers. Only for the
 * forms where every value is then such a number too (the field, constants
 * below 2^53, comparisons, !, && and ||, conditionals, widening casts);
 * larger constants only as a comparison's operand, where x is below them.
 * Null for anything else (arithmetic, narrowing casts, calls, strings):
 * those keep evaluate().
 */
function compileNumeric(n: Node, fieldName: string): NumericFn | null {
  const operand = (m: Node): NumericFn | null => {
    // Above every x: compares as it does with the exact constant.
    if (m.k === 'num' && m.v >= 1n << 53n) return () => Infinity;
    return compileNumeric(m, fieldName);
  };
  switch (n.k) {
    case 'num': {
      if (n.v >= 1n << 53n) return null;
      const v = Number(n.v);
      return () => v;
    }
    case 'field':
      return n.name === fieldName ? (x) => x : null;
    case 'cast': {
      const e = compileNumeric(n.e, fieldName);
      return e !== null && castValue(n.type, WIDE_CAST_PROBE) === WIDE_CAST_PROBE ? e : null;
    }
    case 'un': {
      const e = compileNumeric(n.e, fieldName);
      if (e === null || n.op !== '!') return null;
      return (x) => (e(x) === 0 ? 1 : 0);
    }
    case 'tern': {
      const c = compileNumeric(n.c, fieldName);
      const t = compileNumeric(n.t, fieldName);
      const f = compileNumeric(n.f, fieldName);
      if (c === null || t === null || f === null) return null;
      return (x) => (c(x) !== 0 ? t(x) : f(x));
    }
    case 'bin': {
      const comparison = ['==', '!=', '<', '>', '<=', '>='].includes(n.op);
      const l = comparison ? operand(n.l) : compileNumeric(n.l, fieldName);
      const r = comparison ? operand(n.r) : compileNumeric(n.r, fieldName);
      if (l === null || r === null) return null;
      switch (n.op) {
        case '&&':
          return (x) => (l(x) !== 0 && r(x) !== 0 ? 1 : 0);
        case '||':
          return (x) => (l(x) !== 0 || r(x) !== 0 ? 1 : 0);
        case '==':
          return (x) => (l(x) === r(x) ? 1 : 0);
        case '!=':
          return (x) => (l(x) !== r(x) ? 1 : 0);
        case '<':
          return (x) => (l(x) < r(x) ? 1 : 0);
        case '>':
          return (x) => (l(x) > r(x) ? 1 : 0);
        case '<=':
          return (x) => (l(x) <= r(x) ? 1 : 0);
        case '>=':
          return (x) => (l(x) >= r(x) ? 1 : 0);
        default:
          return null;
      }
    }
    default:
      return null;
  }
}

function makeRenderer(fieldName: string, unfolded: Node[]): SymbolicRenderer {
  const parts = unfolded.map(foldConstants);
  return (raw: bigint) => {
    const lookup: FieldLookup = (name) => (name === fieldName ? raw : undefined);
    let out = '';
    for (const p of parts) {
      const v = evaluate(p, lookup);
      if (typeof v !== 'string') return undefined;
      out += v;
    }
    return out;
  };
}
