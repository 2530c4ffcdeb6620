/**
 * /proc/kallsyms as saved in trace.dat: resolves a function address to the
 * nearest preceding symbol (what %pS prints, without the +off/size part).
 * Addresses are 64-bit, beyond exact JS numbers, so they are kept as hi/lo
 * 32-bit halves; lookups are memoised because the same few callbacks
 * (super_cache_scan, a handful of work functions) repeat millions of times.
 */

export class Kallsyms {
  private readonly hi: Uint32Array;
  private readonly lo: Uint32Array;
  private readonly names: string[];
  private readonly memo = new Map<number, Map<number, string | null>>();

  private constructor(hi: Uint32Array, lo: Uint32Array, names: string[]) {
    this.hi = hi;
    this.lo = lo;
    this.names = names;
  }

  get size(): number {
    return this.names.length;
  }

  static parse(text: string | null): Kallsyms {
    const entries: { hi: number; lo: number; name: string }[] = [];
    if (text) {
      let start = 0;
      const n = text.length;
      while (start < n) {
        let end = text.indexOf('\n', start);
        if (end < 0) end = n;
        const line = text.slice(start, end);
        start = end + 1;
        // "ffffffff81000000 T _stext" or "ffffffffc0a01000 t foo\t[module]"
        const sp1 = line.indexOf(' ');
        if (sp1 <= 0 || sp1 > 16) continue;
        const sp2 = line.indexOf(' ', sp1 + 1);
        if (sp2 < 0) continue;
        const type = line.slice(sp1 + 1, sp2);
        // Absolute symbols are not code addresses and would shadow real functions.
        if (type === 'A' || type === 'a') continue;
        let name = line.slice(sp2 + 1);
        const tab = name.indexOf('\t');
        if (tab >= 0) name = name.slice(0, tab);
        name = name.trim();
        if (!name) continue;
        const hex = line.slice(0, sp1);
        if (!/^[0-9a-fA-F]+$/.test(hex)) continue;
        const padded = hex.padStart(16, '0');
        const hi = parseInt(padded.slice(0, 8), 16);
        const lo = parseInt(padded.slice(8), 16);
        // kptr_restrict hides addresses as 0: useless for lookup
        if (hi === 0 && lo === 0) continue;
        entries.push({ hi, lo, name });
      }
    }
    entries.sort((a, b) => a.hi - b.hi || a.lo - b.lo);
    const hiA = new Uint32Array(entries.length);
    const loA = new Uint32Array(entries.length);
    const names = new Array<string>(entries.length);
    entries.forEach((e, i) => {
      hiA[i] = e.hi;
      loA[i] = e.lo;
      names[i] = e.name;
    });
    return new Kallsyms(hiA, loA, names);
  }

  /** Symbol containing the address (nearest at or below it), or null. */
  lookup(hi: number, lo: number): string | null {
    let byLo = this.memo.get(hi);
    if (!byLo) {
      byLo = new Map();
      this.memo.set(hi, byLo);
    }
    const hit = byLo.get(lo);
    if (hit !== undefined) return hit;
    const found = this.search(hi, lo);
    if (byLo.size < 100_000) byLo.set(lo, found);
    return found;
  }

  private search(hi: number, lo: number): string | null {
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
    return best >= 0 ? this.names[best]! : null;
  }
}
