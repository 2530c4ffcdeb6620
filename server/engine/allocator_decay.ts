/**
 * When DuckDB's allocator gives freed pages back to the OS, switched while
 * the process runs: at once while a trace is being built (decode, load and
 * derive: the ingest's peak RSS) until its decode ends, after a second from
 * then on (the store's COMMIT, derive) and while an upload's detectors and
 * first view run.
 *
 * allocator_env.ts starts the process with jemalloc's decay at 0, which
 * keeps the load's peak down (issue 29: the peak at the store's commit
 * 451 -> 390 MB when it came in). But every later DuckDB statement then
 * pays for it: a page freed by one operator goes back with madvise and the
 * next operator faults it in again, zeroed. Measured on sched_wq.v7 (issue
 * 29, 2026-11-28): a detector statement 23-41 ms with jemalloc's default
 * decay against 56-65 ms with decay 0; but with the default for the whole
 * process a server's second upload peaked at 359-362 MB (over issue 29's
 * 350) against 337-346.
 *
 * jemalloc can change the decay of its arenas at run time (mallctl
 * "arena.<i>.dirty_decay_ms"); libduckdb exports its jemalloc's mallctl as
 * `duckdb_je_mallctl`, called here through koffi (an FFI whose binaries
 * come inside its npm packages). Where either is missing (another platform,
 * a libduckdb built without jemalloc) nothing switches and decay stays 0 for
 * the whole process, as before. A DUCKDB_JE_MALLOC_CONF the user set wins:
 * nothing switches either.
 *
 * Call from the thread that runs ingests (the main thread): the counts are
 * this module's state, and jemalloc's arenas are the process's, whichever
 * thread calls.
 */
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import { DUCKDB_ALLOCATOR_CONF } from './allocator_env.ts';

/** Decay (ms) outside builds: jemalloc's default, what DuckDB ships with. */
export const KEPT_DECAY_MS = 1000;

/** MALLCTL_ARENAS_ALL: "arena.<i>.purge" for every arena at once. */
const ALL_ARENAS = 4096;

/**
 * The most freed pages (bytes, all arenas) kept while pages are kept: past
 * it, all of them go back at once. Why: a second's decay bounds what is kept
 * by time, and what DuckDB frees in a second grows with the work, not with
 * its memory_limit: a store COMMIT that reads back the spilled rows of a
 * 2.2M-event block-heavy trace.dat kept ~90 MB and took the ingest's peak
 * from ~325 to 347-397 MB (issue-29bm note). The pages worth keeping are the
 * ones the next operator reuses at once, a few blocks' worth; 32 MB keeps
 * those. $STALLSCOPE_KEPT_PAGES_MAX_MB overrides (0: no bound).
 */
export const KEPT_PAGES_MAX_BYTES = Number(process.env.STALLSCOPE_KEPT_PAGES_MAX_MB ?? 32) * 1048576;

/**
 * How often (ms) the kept pages are checked against KEPT_PAGES_MAX_BYTES
 * while pages are kept. What can pile up past the bound is what DuckDB frees
 * in this interval; a check (jemalloc's stats refresh and one read) costs
 * microseconds.
 */
export const KEPT_PAGES_CHECK_MS = 20;

type Mallctl = (
  name: string,
  oldp: Buffer | null,
  oldlenp: number[] | null,
  newp: Buffer | null,
  newlen: number,
) => number;

let mallctl: Mallctl | null | undefined;
/** Why nothing switches (for tests and the bench), once known. */
let unavailable: string | null = null;
/** Builds under way (traceBuildStarted), and holders of keepingFreedPages and of pastDecodePeak. */
let builds = 0;
let keepers = 0;
let pastDecode = 0;
/** The decay the arenas were last set to: allocator_env.ts starts them at 0. */
let current = 0;

function loadMallctl(): Mallctl | null {
  if (mallctl !== undefined) return mallctl;
  mallctl = null;
  if (process.env.DUCKDB_JE_MALLOC_CONF !== DUCKDB_ALLOCATOR_CONF) {
    unavailable = 'DUCKDB_JE_MALLOC_CONF was set by the user';
    return null;
  }
  try {
    const require = createRequire(import.meta.url);
    const bindings = path.dirname(
      require.resolve(`@duckdb/node-bindings-${process.platform}-${process.arch}/package.json`),
    );
    const lib = ['libduckdb.so', 'libduckdb.dylib'].map((f) => path.join(bindings, f)).find((f) => fs.existsSync(f));
    if (!lib) throw new Error(`no libduckdb in ${bindings}`);
    const koffi = require('koffi') as typeof import('koffi');
    const fn = koffi
      .load(lib)
      .func(
        'int duckdb_je_mallctl(const char *name, _Inout_ void *oldp, _Inout_ size_t *oldlenp, void *newp, size_t newlen)',
      ) as Mallctl;
    // A read that every jemalloc has: proves the symbol is jemalloc's mallctl.
    const out = Buffer.alloc(4);
    if (fn('arenas.narenas', out, [4], null, 0) !== 0) throw new Error('mallctl arenas.narenas failed');
    mallctl = fn;
  } catch (err) {
    unavailable = (err as Error).message;
  }
  return mallctl;
}

function setDecay(ctl: Mallctl, ms: number): void {
  const value = Buffer.alloc(8);
  value.writeBigInt64LE(BigInt(ms));
  // Arenas made from now on, then every arena that exists (an index jemalloc
  // has not initialised answers an error: nothing to set there). Only dirty
  // pages: with muzzy decay above 0 jemalloc purges dirty pages lazily
  // (MADV_FREE), which stay in RSS until the kernel wants them back.
  ctl('arenas.dirty_decay_ms', null, null, value, 8);
  const count = Buffer.alloc(4);
  ctl('arenas.narenas', count, [4], null, 0);
  for (let i = 0; i < count.readUInt32LE(0); i++) ctl(`arena.${i}.dirty_decay_ms`, null, null, value, 8);
  current = ms;
  boundKeptPages(ctl, ms > 0);
}

let keptPagesCheck: ReturnType<typeof setInterval> | null = null;

/**
 * While pages are kept, checks every KEPT_PAGES_CHECK_MS that they stay
 * under KEPT_PAGES_MAX_BYTES, and purges them all when they do not. The
 * timer runs on the thread that switches the decay (the main thread), which
 * waits on DuckDB's threads or the store worker while they work; it does not
 * keep the process alive.
 */
function boundKeptPages(ctl: Mallctl, kept: boolean): void {
  if (keptPagesCheck !== null) clearInterval(keptPagesCheck);
  keptPagesCheck = null;
  if (!kept || !(KEPT_PAGES_MAX_BYTES > 0)) return;
  keptPagesCheck = setInterval(() => {
    if (keptBytes(ctl) > KEPT_PAGES_MAX_BYTES) ctl(`arena.${ALL_ARENAS}.purge`, null, null, null, 0);
  }, KEPT_PAGES_CHECK_MS);
  keptPagesCheck.unref();
}

const epoch = Buffer.alloc(8);
const sizeOut = Buffer.alloc(8);

/** Freed (dirty) pages the arenas hold now, in bytes; 0 where jemalloc keeps no stats. */
function keptBytes(ctl: Mallctl): number {
  // Its stats are a snapshot taken at each "epoch" write.
  epoch.writeBigUInt64LE(1n);
  if (ctl('epoch', null, null, epoch, 8) !== 0) return 0;
  if (ctl(`stats.arenas.${ALL_ARENAS}.pdirty`, sizeOut, [8], null, 0) !== 0) return 0;
  const pages = Number(sizeOut.readBigUInt64LE(0));
  if (ctl('arenas.page', sizeOut, [8], null, 0) !== 0) return 0;
  return pages * Number(sizeOut.readBigUInt64LE(0));
}

/**
 * Bytes DuckDB's jemalloc has allocated and not freed, in and outside its
 * buffer pool (duckdb_memory() reports the pool's part), or null when its
 * mallctl is not reachable here (for tests).
 */
export function duckDbAllocatedBytes(): number | null {
  const ctl = loadMallctl();
  if (!ctl) return null;
  epoch.writeBigUInt64LE(1n);
  if (ctl('epoch', null, null, epoch, 8) !== 0) return null;
  if (ctl('stats.allocated', sizeOut, [8], null, 0) !== 0) return null;
  return Number(sizeOut.readBigUInt64LE(0));
}

/** The freed pages the arenas hold now (bytes), or null when nothing switches here (for tests). */
export function keptPagesBytes(): number | null {
  const ctl = loadMallctl();
  return ctl ? keptBytes(ctl) : null;
}

/**
 * Kept a second while no build is decoding and a build is past its decode
 * or someone asked; else back at once (and what was kept goes now). A build
 * past its decode is still one of `builds` (pastDecodePeak is held within
 * traceBuildStarted's span), so the builds decoding are the difference: a
 * second upload's decode, the ingest's peak, returns pages at once even
 * while the first upload derives.
 */
function apply(): void {
  const ctl = loadMallctl();
  if (!ctl) return;
  const decoding = Math.max(0, builds - pastDecode);
  const wanted = decoding === 0 && (pastDecode > 0 || keepers > 0) ? KEPT_DECAY_MS : 0;
  if (wanted === current) return;
  setDecay(ctl, wanted);
  if (wanted === 0) ctl(`arena.${ALL_ARENAS}.purge`, null, null, null, 0);
}

/** Counts a holder until the returned function is called (once). */
function hold(count: (delta: number) => void): () => void {
  count(1);
  apply();
  let released = false;
  return () => {
    if (released) return;
    released = true;
    count(-1);
    apply();
  };
}

/**
 * A trace's build (decode, load, derive) begins: DuckDB's freed pages go
 * back at once until the returned function is called, whoever keeps them
 * otherwise; what was kept before goes back now, before the build's peak.
 */
export function traceBuildStarted(): () => void {
  return hold((d) => (builds += d));
}

/**
 * Freed pages stay a second while the returned function is not called and
 * no build runs: an upload's detectors and first view (a 1M-event trace's;
 * a large trace's return them at once: ingest_memory.ts freedPagesKept).
 * Back to at once, with what was kept returned, when the last holder lets
 * go.
 */
export function keepingFreedPages(): () => void {
  return hold((d) => (keepers += d));
}

/**
 * A build is past its decode (the ingest's peak): the store worker's
 * finish+COMMIT, then derive and its COMMIT, each one DuckDB instance on
 * the ingest's critical path. Freed pages stay until the returned function
 * is called, then what was kept goes back at once. With decay 0 the closing
 * appenders, the COMMIT's compression and derive's operators gave every
 * freed block back with madvise and faulted the next one in again, zeroed
 * (kernel ~30% of the store COMMIT's perf samples; ~17.5k madvise calls in
 * a CLI ingest of sched_wq.v7). Alternating pairs (issue 29, 2026-11-28):
 * the store step's CPU, load 5-9, sched_wq.v7 409 -> 337 ms, many_systems.v7
 * 486 -> 432, compile_syscalls.v7 472 -> 381 (29sc note); held through
 * derive as well, whole CLI ingest CPU at load 1.4-1.9, sched_wq.v7 2.80 ->
 * 2.60 s (5 pairs), many_systems.v7 3.21 -> 2.90 s (4 pairs). What this
 * keeps is bounded by the churn of a second under derive's cap: peak RSS
 * +5-11 MB on many_systems.v7 (derive_block's pivots now reach the decode's
 * peak, 287-290 MB), +22 MB on the 148k-event fsync_xfs.full.v7 (169-171 ->
 * 192 MB: a small file's peak is derive's). Not for a large trace (the
 * caller's: ingest_memory.ts freedPagesKept), whose COMMIT can be its peak,
 * and not through derive when the process already holds more
 * (freedPagesKeptThroughDerive).
 */
export function pastDecodePeak(): () => void {
  return hold((d) => (pastDecode += d));
}

/**
 * What jemalloc itself says every existing arena's dirty-page decay is (ms;
 * one value when they agree, else all of them), or null when nothing
 * switches here, with why.
 */
export function allocatorDecayState(): { decayMs: number[] | null; unavailable: string | null } {
  const ctl = loadMallctl();
  if (!ctl) return { decayMs: null, unavailable };
  const count = Buffer.alloc(4);
  ctl('arenas.narenas', count, [4], null, 0);
  const seen = new Set<number>();
  for (let i = 0; i < count.readUInt32LE(0); i++) {
    const out = Buffer.alloc(8);
    if (ctl(`arena.${i}.dirty_decay_ms`, out, [8], null, 0) === 0) seen.add(Number(out.readBigInt64LE(0)));
  }
  return { decayMs: [...seen].sort((a, b) => a - b), unavailable: null };
}
