/** A 4xx answer with a message for the user: routes throw it, the error handler sends `{error}`. */
export class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
  ) {
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
export function bigParam(
  q: Query,
  key: string,
  opts: { required?: boolean; min?: bigint; max?: bigint } = {},
): bigint | undefined {
  const s = one(q, key);
  if (s === undefined || s === '') {
    if (opts.required) throw new HttpError(400, `query parameter ${key} is required`);
    return undefined;
  }
  if (!/^-?\d{1,20}$/.test(s))
    throw new HttpError(400, `query parameter ${key} must be an integer, got ${JSON.stringify(s.slice(0, 40))}`);
  const v = BigInt(s);
  if (opts.min !== undefined && v < opts.min) throw new HttpError(400, `query parameter ${key} must be >= ${opts.min}`);
  if (opts.max !== undefined && v > opts.max) throw new HttpError(400, `query parameter ${key} must be <= ${opts.max}`);
  return v;
}

export function intParam(
  q: Query,
  key: string,
  opts: { required?: boolean; min?: number; max?: number; def?: number } = {},
): number | undefined {
  const v = bigParam(q, key, {
    required: opts.required && opts.def === undefined,
    min: opts.min === undefined ? undefined : BigInt(opts.min),
    max: opts.max === undefined ? undefined : BigInt(opts.max),
  });
  return v === undefined ? opts.def : Number(v);
}

export function enumParam<T extends string>(q: Query, key: string, allowed: readonly T[], def?: T): T {
  const s = one(q, key);
  if (s === undefined || s === '') {
    if (def !== undefined) return def;
    throw new HttpError(400, `query parameter ${key} is required (one of ${allowed.join(', ')})`);
  }
  if (!(allowed as readonly string[]).includes(s))
    throw new HttpError(400, `query parameter ${key} must be one of ${allowed.join(', ')}`);
  return s as T;
}

export function stringParam(
  q: Query,
  key: string,
  opts: { required?: boolean; maxLen?: number; pattern?: RegExp } = {},
): string | undefined {
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
  if (s === undefined || s === '')
    throw new HttpError(400, `query parameter ${key} is required (comma-separated event ids)`);
  const parts = s.split(',');
  if (parts.length > maxCount) throw new HttpError(400, `at most ${maxCount} ids per request`);
  return parts.map((p) => {
    if (!/^\d{1,20}$/.test(p.trim())) throw new HttpError(400, `${key} must be comma-separated integers`);
    return BigInt(p.trim());
  });
}

/** Trace ids are content hashes (hex); anything else is rejected before it reaches the library. */
export { TRACE_ID_RE } from '../../shared/contract/trace_id.ts';
import { TRACE_ID_RE } from '../../shared/contract/trace_id.ts';

/** The `:id` route parameter: a trace id (shared/contract/trace_id.ts), else 400. */
export function traceParam(params: unknown): string {
  const id = (params as { id?: string }).id ?? '';
  if (!TRACE_ID_RE.test(id)) throw new HttpError(400, 'trace id must be the trace content hash (hex)');
  return id;
}

/** What a system error code means to the person using stallscope. */
const SYSTEM_ERRORS: Record<string, { status: number; message: string }> = {
  ENOSPC: {
    status: 507,
    message: "the server's disk is full: nothing was saved. Free some space on the server and retry",
  },
  EDQUOT: {
    status: 507,
    message: "the server's disk quota is used up: nothing was saved. Free some space on the server and retry",
  },
  EROFS: { status: 503, message: "the server's data directory is read-only: nothing was saved" },
  EACCES: {
    status: 503,
    message: 'the server may not write to its data directory (permission denied): nothing was saved',
  },
  EPERM: {
    status: 503,
    message: 'the server may not write to its data directory (operation not permitted): nothing was saved',
  },
  EIO: { status: 503, message: "the server's disk reported an I/O error: nothing was saved; check the server's disk" },
  EMFILE: { status: 503, message: 'the server has too many files open: retry in a moment' },
  ENFILE: { status: 503, message: 'the server has too many files open: retry in a moment' },
};

/**
 * A 5xx answer's status and message for the user: system errors (disk full,
 * read-only, I/O) in plain words, and no server paths in any message (the
 * data directory's layout is the server's business; `paths` are replaced,
 * and any other absolute path is cut to its file name).
 */
export function userFacingError(
  err: Error & { code?: string },
  status: number,
  paths: Array<string | undefined>,
): { status: number; message: string } {
  const sys = err.code ? SYSTEM_ERRORS[err.code] : undefined;
  if (sys) return sys;
  if (status < 500) return { status, message: scrubPaths(err.message, paths) };
  return { status, message: `internal error: ${scrubPaths(err.message, paths)}` };
}

export function scrubPaths(message: string, paths: Array<string | undefined>): string {
  let m = message;
  for (const p of [...new Set(paths.filter((x): x is string => !!x && x.length > 1))].sort(
    (a, b) => b.length - a.length,
  )) {
    m = m.split(p).join('<data dir>');
  }
  // Any other absolute path: keep its last component only.
  return m.replace(/(^|[\s'"(=:])\/(?:[^\s'"/()]+\/)+([^\s'"/()]*)/g, '$1$2');
}
