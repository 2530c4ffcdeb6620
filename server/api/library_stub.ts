/**
 * Stand-in for server/ingest/library.ts until the real TraceLibrary lands:
 * same surface (LibraryLike), content-hash dedupe and a persisted index, but
 * "ingest" recognises a trace by its first bytes and writes a synthetic
 * database (dev_synthetic.ts). To be deleted once the real library exists.
 */
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync, openSync, readSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { openDuckDb, type Engine } from '../engine/engine.ts';
import type { FindingLike, IngestProgress, LibraryLike, TraceRecordLike } from './library_contract.ts';
import { SYNTH_BASE_TS, writeSyntheticTrace } from './dev_synthetic.ts';

interface Index {
  traces: TraceRecordLike[];
  findings: Record<string, FindingLike[]>;
}

export class StubTraceLibrary implements LibraryLike {
  private index: Index;
  private constructor(readonly dataDir: string) {
    const p = join(dataDir, 'stub-library.json');
    this.index = existsSync(p)
      ? (JSON.parse(readFileSync(p, 'utf8'), (_k, v) => (typeof v === 'string' && /^\d+n$/.test(v) ? BigInt(v.slice(0, -1)) : v)) as Index)
      : { traces: [], findings: {} };
    for (const t of this.index.traces) if (t.status === 'ingesting') { t.status = 'failed'; t.error = 'server stopped during ingest'; }
  }

  static open(dataDir: string): StubTraceLibrary {
    mkdirSync(dataDir, { recursive: true });
    return new StubTraceLibrary(dataDir);
  }

  private save(): void {
    const p = join(this.dataDir, 'stub-library.json');
    writeFileSync(p + '.tmp', JSON.stringify(this.index, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v)));
    renameSync(p + '.tmp', p);
  }

  list(): TraceRecordLike[] {
    return [...this.index.traces];
  }

  get(id: string): TraceRecordLike | undefined {
    return this.index.traces.find((t) => t.id === id);
  }

  async ingest(filePath: string, opts: { name: string; onProgress?: (p: IngestProgress) => void }): Promise<TraceRecordLike> {
    const total = statSync(filePath).size;
    const report = (p: Partial<IngestProgress> & { phase: IngestProgress['phase'] }) =>
      opts.onProgress?.({ bytesDone: 0, bytesTotal: total, events: 0, ...p });
    const hash = createHash('sha256');
    let done = 0;
    await new Promise<void>((resolve, reject) => {
      createReadStream(filePath)
        .on('data', (b) => { hash.update(b); done += b.length; report({ phase: 'hashing', bytesDone: done }); })
        .on('end', resolve)
        .on('error', reject);
    });
    const id = hash.digest('hex');
    const existing = this.get(id);
    if (existing?.status === 'ready') { report({ phase: 'done', bytesDone: total, events: existing.eventsTotal }); return existing; }
    const kind = sniff(filePath);
    if (!kind) {
      const message = `${opts.name} is not a trace: expected a trace.dat file (trace-cmd record) or ftrace text (trace-cmd report / tracefs trace)`;
      report({ phase: 'failed', message });
      throw new Error(message);
    }
    const rec: TraceRecordLike = {
      id, name: opts.name, sizeBytes: total, format: kind, formatVersion: null, cpus: null, kernel: null,
      eventsTotal: 0, firstTs: null, lastTs: null, findingsBySeverity: { info: 0, warn: 0, critical: 0 },
      addedAt: new Date().toISOString(), status: 'ingesting',
    };
    this.index.traces = this.index.traces.filter((t) => t.id !== id).concat(rec);
    this.save();
    try {
      report({ phase: 'decoding', bytesDone: total / 2 });
      const db = join(this.dataDir, `${id}.duckdb`);
      const slices = Number(process.env.STALLSCOPE_STUB_SLICES ?? 40_000);
      const { events, findings } = await writeSyntheticTrace(db + '.tmp', { slicesPerCpu: slices });
      renameSync(db + '.tmp', db);
      report({ phase: 'detecting', bytesDone: total, events });
      Object.assign(rec, {
        status: 'ready', eventsTotal: events, cpus: 4, kernel: '6.18.0-synthetic', firstTs: SYNTH_BASE_TS,
        findingsBySeverity: {
          info: findings.filter((f) => f.severity === 'info').length,
          warn: findings.filter((f) => f.severity === 'warn').length,
          critical: findings.filter((f) => f.severity === 'critical').length,
        },
      });
      this.index.findings[id] = findings;
      this.save();
      report({ phase: 'done', bytesDone: total, events });
      return rec;
    } catch (e) {
      rec.status = 'failed';
      rec.error = (e as Error).message;
      this.save();
      report({ phase: 'failed', message: rec.error });
      throw e;
    }
  }

  async openEngine(id: string): Promise<Engine> {
    const t = this.get(id);
    if (!t || t.status !== 'ready') throw new Error(`trace ${id} is not ready`);
    return openDuckDb(join(this.dataDir, `${id}.duckdb`), { readOnly: true });
  }

  findings(id: string): { findings: FindingLike[]; summaries: unknown[] } {
    return { findings: this.index.findings[id] ?? [], summaries: [] };
  }
}

function sniff(path: string): string | null {
  const fd = openSync(path, 'r');
  const buf = Buffer.alloc(65536);
  const n = readSync(fd, buf, 0, buf.length, 0);
  closeSync(fd);
  const head = buf.subarray(0, n);
  if (head.subarray(0, 10).equals(Buffer.from([0x17, 0x08, 0x44, 0x74, 0x72, 0x61, 0x63, 0x69, 0x6e, 0x67]))) return 'trace_dat';
  const text = head.toString('latin1');
  if (/^\s*\S.*-\d+\s+(\(\s*[\d-]+\)\s+)?\[\d{3}\]\s.*\d+\.\d+:\s+\w+:/m.test(text)) return 'trace_cmd_report';
  return null;
}
