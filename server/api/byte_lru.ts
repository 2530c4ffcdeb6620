/**
 * A least-recently-used map bounded by the bytes of what it holds, not by
 * its number of entries: 400 cached track answers of a few MB each took the
 * server past 2 GB and kept it there (issue 27). An entry bigger than the
 * whole budget is not kept at all.
 *
 * The server's cache budgets (create_server.ts DEFAULT_CACHE_BUDGETS):
 * track answers 64 MiB, timeline overviews 128 MiB, findings answers 32 MiB.
 */
export class ByteLru<K, V> {
  private readonly map = new Map<K, { value: V; bytes: number }>();
  private total = 0;
  private budget: number;

  constructor(
    maxBytes: number,
    private readonly onEvict?: (key: K, value: V) => void,
  ) {
    this.budget = maxBytes;
  }

  /** The budget in bytes. */
  get maxBytes(): number {
    return this.budget;
  }

  /** Another budget: past it the least recently used entries go now. */
  setBudget(maxBytes: number): void {
    this.budget = maxBytes;
    this.shrinkTo(maxBytes);
  }

  /** Bytes held now (never more than maxBytes once set() returns). */
  get bytes(): number {
    return this.total;
  }

  get size(): number {
    return this.map.size;
  }

  /** The value, now the most recently used. */
  get(key: K): V | undefined {
    const e = this.map.get(key);
    if (!e) return undefined;
    this.map.delete(key);
    this.map.set(key, e);
    return e.value;
  }

  /** The value, without making it recently used. */
  peek(key: K): V | undefined {
    return this.map.get(key)?.value;
  }

  has(key: K): boolean {
    return this.map.has(key);
  }

  /** Keeps `value` (most recently used) as `bytes`, evicting the least recently used past the budget. */
  set(key: K, value: V, bytes: number): void {
    this.delete(key);
    if (bytes > this.maxBytes) return;
    this.map.set(key, { value, bytes });
    this.total += bytes;
    this.shrinkTo(this.maxBytes);
  }

  /** An entry's size changed (it grew after it was kept). */
  resize(key: K, bytes: number): void {
    const e = this.map.get(key);
    if (!e) return;
    this.total += bytes - e.bytes;
    e.bytes = bytes;
    if (bytes > this.maxBytes) this.delete(key, true);
    this.shrinkTo(this.maxBytes);
  }

  delete(key: K, evicted = false): void {
    const e = this.map.get(key);
    if (!e) return;
    this.map.delete(key);
    this.total -= e.bytes;
    if (evicted) this.onEvict?.(key, e.value);
  }

  /** Drops every entry whose key matches. */
  deleteWhere(pred: (key: K) => boolean): void {
    for (const k of [...this.map.keys()]) if (pred(k)) this.delete(k);
  }

  clear(): void {
    this.map.clear();
    this.total = 0;
  }

  private shrinkTo(limit: number): void {
    while (this.total > limit) {
      const oldest = this.map.keys().next();
      if (oldest.done) break;
      this.delete(oldest.value, true);
    }
  }
}

/** Bytes of a JavaScript string as V8 keeps it (one byte per character for Latin-1 text, two otherwise), roughly. */
export function stringBytes(s: string): number {
  // JSON answers are ASCII: one byte per character, plus the object header.
  return s.length + 32;
}
