/**
 * A token bucket per client (its address): `burst` requests at once, refilled
 * at `perSecond`. In memory; idle buckets are dropped when the map grows.
 */
export interface RateLimit {
  burst: number;
  perSecond: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    readonly limit: RateLimit,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Takes one token for `key`: ok, or how many seconds until the next one. */
  take(key: string): { ok: true } | { ok: false; retryAfterS: number } {
    const t = this.now();
    let b = this.buckets.get(key);
    if (!b) {
      if (this.buckets.size >= 10_000) this.prune(t);
      b = { tokens: this.limit.burst, at: t };
      this.buckets.set(key, b);
    }
    b.tokens = Math.min(this.limit.burst, b.tokens + ((t - b.at) / 1000) * this.limit.perSecond);
    b.at = t;
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return { ok: true };
    }
    return { ok: false, retryAfterS: Math.max(1, Math.ceil((1 - b.tokens) / this.limit.perSecond)) };
  }

  private prune(t: number): void {
    for (const [k, b] of this.buckets) {
      if (b.tokens + ((t - b.at) / 1000) * this.limit.perSecond >= this.limit.burst) this.buckets.delete(k);
    }
  }
}
