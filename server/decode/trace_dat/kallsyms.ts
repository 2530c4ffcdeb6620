/**
 * /proc/kallsyms as saved in trace.dat: resolves a function address to the
 * nearest preceding symbol (what %ps prints; lookupWithOffset: %pS's
 * `func+0x45`, without the kernel's /size, as trace-cmd prints it).
 * Addresses are 64-bit, beyond exact JS numbers, so they are kept as hi/lo
 * 32-bit halves; lookups are memoised because the same few callbacks
 * (super_cache_scan, a handful of work functions) repeat millions of times.
 */

export class Kallsyms {
  private hi: Uint32Array = new Uint32Array(0);
  private lo: Uint32Array = new Uint32Array(0);
  private names: string[] = [];
  /** The text not parsed yet (lazy()), else null. */
  private text: string | null = null;
  private readonly memo = new Map<number, Map<number, string | null>>();
  private readonly offsetMemo = new Map<number, Map<number, string | null>>();

  private constructor(hi: Uint32Array, lo: Uint32Array, names: string[]) {
    this.hi = hi;
    this.lo = lo;
    this.names = names;
  }

  /** Symbols kept (as lookups see them); counted without parsing when not parsed yet (lazy()). */
  get size(): number {
    if (this.text !== null) return Kallsyms.scan(this.text, null);
    return this.names.length;
  }

  /**
   * As parse(), parsed on the first lookup. The main thread reports the
   * size of every trace's table but looks few symbols up, often none:
   * sorting 122k symbols of a 5.4 MB kallsyms cost it ~130 ms (cold).
   */
  static lazy(text: string | null): Kallsyms {
    const k = new Kallsyms(new Uint32Array(0), new Uint32Array(0), []);
    k.text = text;
    return k;
  }

  private parsed(): void {
    if (this.text === null) return;
    const t = Kallsyms.parse(this.text);
    this.text = null;
    this.hi = t.hi;
    this.lo = t.lo;
    this.names = t.names;
  }

  static parse(text: string | null): Kallsyms {
    const out = { his: [] as number[], los: [] as number[], names: [] as string[] };
    if (text) Kallsyms.scan(text, out);
    const { his, los, names } = out;
    const order = Array.from({ length: names.length }, (_, i) => i);
    order.sort((a, b) => his[a]! - his[b]! || los[a]! - los[b]!);
    const hiA = new Uint32Array(order.length);
    const loA = new Uint32Array(order.length);
    const sortedNames = new Array<string>(order.length);
    order.forEach((j, i) => {
      hiA[i] = his[j]!;
      loA[i] = los[j]!;
      sortedNames[i] = names[j]!;
    });
    return new Kallsyms(hiA, loA, sortedNames);
  }

  /**
   * The symbols of the text, in file order, into `out` (null: only counted,
   * by the same rules). Returns how many.
   */
  private static scan(text: string, out: { his: number[]; los: number[]; names: string[] } | null): number {
    let kept = 0;
    let start = 0;
    // The first tab at or after the current name (n: none left): one forward search for the whole text.
    let nextTab = -1;
    const n = text.length;
    while (start < n) {
      let end = text.indexOf('\n', start);
      if (end < 0) end = n;
      // "ffffffff81000000 T _stext" or "ffffffffc0a01000 t foo\t[module]"
      const sp1 = text.indexOf(' ', start);
      const lineStart = start;
      start = end + 1;
      if (sp1 <= lineStart || sp1 > lineStart + 16 || sp1 >= end) continue;
      const type = text.charCodeAt(sp1 + 1);
      // Absolute symbols are not code addresses and would shadow real functions.
      if (type === 65 /* A */ || type === 97 /* a */ || text.charCodeAt(sp1 + 2) !== 32) continue;
      // The name ends at a tab (a module's "\t[module]") or the line's end, without a trailing CR.
      const nameStart = sp1 + 3;
      if (nextTab < nameStart) {
        nextTab = text.indexOf('\t', nameStart);
        if (nextTab < 0) nextTab = n;
      }
      let nameEnd = nextTab < end ? nextTab : end;
      if (nameEnd > nameStart && text.charCodeAt(nameEnd - 1) === 13 /* \r */) nameEnd--;
      if (nameEnd <= nameStart) continue;
      const digits = sp1 - lineStart;
      const hi = digits > 8 ? parseInt(text.slice(lineStart, sp1 - 8), 16) : 0;
      const lo = parseInt(text.slice(Math.max(lineStart, sp1 - 8), sp1), 16);
      if (Number.isNaN(hi) || Number.isNaN(lo)) continue;
      // kptr_restrict hides addresses as 0: useless for lookup
      if (hi === 0 && lo === 0) continue;
      kept++;
      if (out !== null) {
        out.his.push(hi);
        out.los.push(lo);
        out.names.push(text.slice(nameStart, nameEnd));
      }
    }
    return kept;
  }

  /** The symbol containing the address and the offset into it, as %pS prints them (`func+0x45`), or null. */
  lookupWithOffset(hi: number, lo: number): string | null {
    return this.memoized(
      this.offsetMemo,
      hi,
      lo,
      (i) =>
        // Addresses are below 2^64 and a symbol's offsets far below 2^53: exact as a number.
        `${this.names[i]!}+0x${((hi - this.hi[i]!) * 4294967296 + (lo - this.lo[i]!)).toString(16)}`,
    );
  }

  /** Symbol containing the address (nearest at or below it), or null. */
  lookup(hi: number, lo: number): string | null {
    return this.memoized(this.memo, hi, lo, (i) => this.names[i]!);
  }

  /** name(index of the symbol at or below the address), or null if none, remembered per address. */
  private memoized(
    memo: Map<number, Map<number, string | null>>,
    hi: number,
    lo: number,
    name: (i: number) => string,
  ): string | null {
    let byLo = memo.get(hi);
    if (!byLo) {
      byLo = new Map();
      memo.set(hi, byLo);
    }
    const hit = byLo.get(lo);
    if (hit !== undefined) return hit;
    this.parsed();
    const i = this.index(hi, lo);
    const found = i >= 0 ? name(i) : null;
    if (byLo.size < 100_000) byLo.set(lo, found);
    return found;
  }

  /** Index of the symbol at or below the address, -1 if none. */
  private index(hi: number, lo: number): number {
    let l = 0;
    let r = this.names.length - 1;
    let best = -1;
    while (l <= r) {
      const m = (l + r) >> 1;
      const mh = this.hi[m]!;
      const ml = this.lo[m]!;
      if (mh < hi || (mh === hi && ml <= lo)) {
        best = m;
        l = m + 1;
      } else r = m - 1;
    }
    return best;
  }
}
