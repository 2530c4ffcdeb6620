/** A 4xx answer with a message for the user: routes throw it, the error handler sends `{error}`. */
export class HttpError extends Error {
  constructor(readonly statusCode: number, message: string) {
    super(message);
    this.name = 'HttpError';
  }
}

type Query = Record<string, unknown>;

function one(q: Query, key: string): string | undefined {
  const v = q[key];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw new HttpError(400, `query parameter ${key} must be given once`);
  return v;
}

/** An integer query parameter (ns values may exceed 2^53, so bigint). */
export function bigParam(q: Query, key: string, opts: { required?: boolean; min?: bigint; max?: bigint } = {}): bigint | undefined {
  const s = one(q, key);
  if (s === undefined || s === '') {
    if (opts.required) throw new HttpError(400, `query parameter ${key} is required`);
    return undefined;
  }
  if (!/^-?\d{1,20}$/.test(s)) throw new HttpError(400, `query parameter ${key} must be an integer, got ${JSON.stringify(s.slice(0, 40))}`);
  const v = BigInt(s);
  if (opts.min !== undefined && v < opts.min) throw new HttpError(400, `query parameter ${key} must be >= ${opts.min}`);
  if (opts.max !== undefined && v > opts.max) throw new HttpError(400, `query parameter ${key} must be <= ${opts.max}`);
  return v;
}

export function intParam(q: Query, key: string, opts: { required?: boolean; min?: number; max?: number; def?: number } = {}): number | undefined {
  const v = bigParam(q, key, { required: opts.required && opts.def === undefined, min: opts.min === undefined ? undefined : BigInt(opts.min), max: opts.max === undefined ? undefined : BigInt(opts.max) });
  return v === undefined ? opts.def : Number(v);
}

export function enumParam<T extends string>(q: Query, key: string, allowed: readonly T[], def?: T): T {
  const s = one(q, key);
  if (s === undefined || s === '') {
    if (def !== undefined) return def;
    throw new HttpError(400, `query parameter ${key} is required (one of ${allowed.join(', ')})`);
  }
  if (!(allowed as readonly string[]).includes(s)) throw new HttpError(400, `query parameter ${key} must be one of ${allowed.join(', ')}`);
  return s as T;
}

export function stringParam(q: Query, key: string, opts: { required?: boolean; maxLen?: number; pattern?: RegExp } = {}): string | undefined {
  const s = one(q, key);
  if (s === undefined || s === '') {
    if (opts.required) throw new HttpError(400, `query parameter ${key} is required`);
    return undefined;
  }
  if (s.length > (opts.maxLen ?? 200)) throw new HttpError(400, `query parameter ${key} is too long`);
  if (opts.pattern && !opts.pattern.test(s)) throw new HttpError(400, `query parameter ${key} is malformed`);
  return s;
}

/** Comma-separated non-negative integer ids. */
export function idListParam(q: Query, key: string, maxCount: number): bigint[] {
  const s = one(q, key);
  if (s === undefined || s === '') throw new HttpError(400, `query parameter ${key} is required (comma-separated event ids)`);
  const parts = s.split(',');
  if (parts.length > maxCount) throw new HttpError(400, `at most ${maxCount} ids per request`);
  return parts.map((p) => {
    if (!/^\d{1,20}$/.test(p.trim())) throw new HttpError(400, `${key} must be comma-separated integers`);
    return BigInt(p.trim());
  });
}

/** Trace ids are content hashes (hex); anything else is rejected before it reaches the library. */
export const TRACE_ID_RE = /^[0-9a-f]{8,128}$/;
