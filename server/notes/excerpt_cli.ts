/**
 * `stallscope excerpt FILE SEL`: the text the app's "Copy as text" gives,
 * from a terminal, so a review mail can be written without a browser.
 *
 *   stallscope excerpt trace.dat finding:183405219980422   a finding (ids as in `analyze` and links)
 *   stallscope excerpt trace.dat event:1234                 one event
 *   stallscope excerpt trace.dat t0=1000000,t1=5000000      ns from the trace's first event, as links write them
 *   stallscope excerpt trace.dat 5201.20-5201.25            absolute trace time in seconds, as trace-cmd prints it
 *   stallscope excerpt trace.dat 'http://host:7420/?trace=...&sel=finding:3'   a share link
 *
 * The file is ingested first if needed (as `analyze` does); findings come
 * from the library's cache, so ids are the app's. The link names
 * `--public-url` (default http://127.0.0.1:7420).
 */
import { openDuckDb, type Engine } from '../engine/engine.ts';
import { ingestFile } from '../ingest/ingest_file.ts';
import { TraceLibrary } from '../ingest/library.ts';
import { resolveDataDir } from '../ingest/data_dir.ts';
import type { OpenTrace } from '../api/trace_engines.ts';
import { formatExcerpt } from './excerpt.ts';
import { SEL_RE, resolveSelection, type Selection } from './excerpt_selection.ts';
import { shareSearch } from './share_link.ts';
import { parsePublicUrl } from '../api/public_url.ts';
import { NotesStore } from './notes_store.ts';
import { join } from 'node:path';

export class ExcerptError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ExcerptError';
  }
}

/** Seconds as trace-cmd prints them ('5201.066521') -> ns. */
function secondsToNs(text: string): bigint {
  const [s, frac = ''] = text.split('.');
  return BigInt(s!) * 1_000_000_000n + BigInt((frac + '000000000').slice(0, 9));
}

/** Parses SEL (see the file comment); absolute times need the trace's first ts. */
export function parseSelection(text: string, base: bigint): Selection {
  let sel = text.trim();
  if (/^https?:\/\//.test(sel)) {
    const p = new URL(sel).searchParams;
    const s = p.get('sel');
    if (s && SEL_RE.test(s)) sel = s;
    else if (p.get('t0') && p.get('t1')) sel = `t0=${p.get('t0')},t1=${p.get('t1')}`;
    else throw new ExcerptError(`the link names no finding, event or time range: ${text}`);
  }
  const m = SEL_RE.exec(sel);
  if (m) return { kind: m[1] as 'finding', id: Number(m[2]) };
  const rel = /^t0=(\d{1,19})[,&]t1=(\d{1,19})$/.exec(sel);
  if (rel) {
    const t0 = BigInt(rel[1]!);
    const t1 = BigInt(rel[2]!);
    if (t1 <= t0) throw new ExcerptError('t1 must be greater than t0');
    return { kind: 'range', t0, t1 };
  }
  const abs = /^(\d{1,12}(?:\.\d{1,9})?)s?-(\d{1,12}(?:\.\d{1,9})?)s?$/.exec(sel);
  if (abs) {
    const a = secondsToNs(abs[1]!);
    const b = secondsToNs(abs[2]!);
    if (b <= a) throw new ExcerptError('the range must end after it starts');
    if (a < base)
      throw new ExcerptError(
        `the range starts before the trace (its first event is at ${base / 1_000_000_000n}.${(base % 1_000_000_000n).toString().padStart(9, '0')} s)`,
      );
    return { kind: 'range', t0: a - base, t1: b - base };
  }
  throw new ExcerptError(
    `SEL must be finding:<id>, event:<id>, sched:<id>, state:<id>, slice:<id>, t0=<ns>,t1=<ns>, <sec>-<sec> or a share link; got ${text}`,
  );
}

async function openTrace(engine: Engine): Promise<OpenTrace> {
  const [b] = await engine.query<{ a: bigint | null; z: bigint | null }>(
    `SELECT (SELECT TRY_CAST(value AS BIGINT) FROM trace_info WHERE key = 'first_ts') AS a, (SELECT TRY_CAST(value AS BIGINT) FROM trace_info WHERE key = 'last_ts') AS z`,
  );
  const tables = new Set(
    (
      await engine.query<{ n: string }>(
        `SELECT table_name AS n FROM duckdb_tables() UNION SELECT view_name FROM duckdb_views()`,
      )
    ).map((r) => r.n),
  );
  return {
    meta: { base: b?.a ?? 0n, last: b?.z ?? 0n, maxDur: { sched_slice: 0n, thread_state: 0n, slice: 0n }, tables },
    query: (sql, params) => engine.query(sql, params),
  };
}

export async function excerptForFile(
  file: string,
  selText: string,
  opts: { dataDir?: string; maxLines?: number; publicUrl?: string } = {},
): Promise<string> {
  const dataDir = resolveDataDir(opts.dataDir);
  const { summary, dbPath, id } = await ingestFile(file, { dataDir });
  const library = await TraceLibrary.open(dataDir);
  try {
    const sel0 =
      /^finding:/.test(selText.trim()) || /sel=finding/.test(selText) ? await library.findings(id) : { findings: [] };
    const engine = await openDuckDb(dbPath, { readOnly: true });
    try {
      const tr = await openTrace(engine);
      const selection = parseSelection(selText, tr.meta.base);
      let r;
      try {
        r = await resolveSelection(tr, sel0.findings, selection, opts.maxLines ?? 200);
      } catch (e) {
        if ((e as Error).name === 'SelectionNotFound')
          throw new ExcerptError(`${summary.name}: ${(e as Error).message}`);
        throw e;
      }
      const notes = (await new NotesStore(join(dataDir, 'notes')).list(id)).filter(
        (n) =>
          r.sel !== null &&
          (n.anchor.kind === 'finding'
            ? `finding:${n.anchor.finding}`
            : n.anchor.kind === 'event'
              ? `event:${n.anchor.event}`
              : n.anchor.ref) === r.sel,
      );
      const origin = parsePublicUrl(opts.publicUrl ?? 'http://127.0.0.1:7420');
      const link = `${origin}/${shareSearch({ trace: id, t0: r.window.t0, t1: r.window.t1, sel: r.sel, note: notes.length === 1 ? notes[0]!.id : null })}`;
      return formatExcerpt({
        trace: {
          id,
          name: summary.name,
          kernel: (summary.meta?.kernel as string | undefined) ?? null,
          cpus: summary.cpus,
        },
        sentence: r.sentence,
        values: r.values,
        lines: r.lines,
        eventsTotal: r.total,
        notes,
        link,
      });
    } finally {
      engine.close();
    }
  } finally {
    await library.close();
  }
}
