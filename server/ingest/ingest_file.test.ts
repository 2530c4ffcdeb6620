// How ingestFile comes by a trace's id: handed over (the server hashes an
// upload while it writes it), hashed first (an earlier ingest of the same
// content may be reused), or hashed on its own thread while decoding.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DecodeError } from '../decode/decoded_event.ts';
import { openDuckDb } from '../engine/engine.ts';
import { ingestFile, type IngestPhase } from './ingest_file.ts';
import { queryTraceProcessor } from '../../tests/support/decode/perfetto/test_trace_processor.ts';

const FIXTURE = path.resolve(__dirname, '../../fixtures/handmade/kernel4x_kswapd_escalation.txt');
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-ingest-'));
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

describe('ingestFile contentSha256', () => {
  it('a given hash is the trace id, and the file is not read to hash it', async () => {
    const sha = createHash('sha256').update(fs.readFileSync(FIXTURE)).digest('hex');
    const hashed: number[] = [];
    const phases = new Set<IngestPhase>();
    const r = await ingestFile(FIXTURE, {
      dataDir,
      contentSha256: sha,
      onProgress: (p) => {
        phases.add(p.phase);
        if (p.phase === 'hashing') hashed.push(p.bytesDone);
      },
    });
    expect(r.id).toBe(sha);
    expect(r.summary.eventsTotal).toBe(19); // fixtures/handmade/README.md
    // Only the initial 0-byte report: no pass over the file.
    expect(hashed.filter((n) => n > 0)).toEqual([]);
    expect(phases.has('done')).toBe(true);
  });

  it('a malformed hash is refused before anything is written', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-ingest-bad-'));
    await expect(ingestFile(FIXTURE, { dataDir: dir, contentSha256: '../../etc' })).rejects.toThrow(
      /contentSha256 must be 64 lowercase hex/,
    );
    expect(fs.existsSync(path.join(dir, 'traces'))).toBe(false);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe('ingestFile hashing while decoding', () => {
  const V7 = path.resolve(__dirname, '../../fixtures/reclaim_kswapd.v7.dat');
  const sha256Of = (f: string) => createHash('sha256').update(fs.readFileSync(f)).digest('hex');

  it('in a library with nothing of the same size, the id is hashed while decoding and equals the sha256', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-ingest-overlap-'));
    const phases: IngestPhase[] = [];
    const r = await ingestFile(V7, { dataDir: dir, onProgress: (p) => phases.push(p.phase) });
    expect(r.id).toBe(sha256Of(V7));
    expect(r.reused).toBe(false);
    expect(r.summary.seconds.hashOverlapped).toBe(true);
    expect(phases).not.toContain('hashing');
    expect(fs.existsSync(path.join(dir, 'traces', r.id, 'info.json'))).toBe(true);
    expect(fs.readdirSync(path.join(dir, 'tmp'))).toEqual([]);

    // The same content again: a trace of that size exists, so the id comes
    // first and the earlier model is reused without decoding.
    const again: IngestPhase[] = [];
    const r2 = await ingestFile(V7, { dataDir: dir, onProgress: (p) => again.push(p.phase) });
    expect(r2).toMatchObject({ id: r.id, reused: true });
    expect(again).toContain('hashing');
    expect(again).not.toContain('decoding');
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('--force rebuilds with the hash overlapped, and the rebuilt trace replaces the old one', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-ingest-force-'));
    const first = await ingestFile(FIXTURE, { dataDir: dir });
    const forced = await ingestFile(FIXTURE, { dataDir: dir, force: true });
    expect(forced).toMatchObject({ id: first.id, reused: false });
    expect(forced.summary.seconds.hashOverlapped).toBe(true);
    expect(fs.readdirSync(path.join(dir, 'traces'))).toEqual([first.id]);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a file that fails to decode while its hash is computed leaves nothing behind', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-ingest-fail-'));
    const bad = path.resolve(__dirname, '../../fixtures/handmade/bad_binary_not_trace.bin');
    await expect(ingestFile(bad, { dataDir: dir })).rejects.toBeInstanceOf(DecodeError);
    expect(fs.existsSync(path.join(dir, 'traces'))).toBe(false);
    expect(fs.readdirSync(path.join(dir, 'tmp'))).toEqual([]);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe('ingestFile block size', () => {
  // fixtures/build_balance.counts.json: trace-cmd report's events per name.
  const V7 = path.resolve(__dirname, '../../fixtures/build_balance.v7.dat');
  const counts = JSON.parse(
    fs.readFileSync(path.resolve(__dirname, '../../fixtures/build_balance.counts.json'), 'utf8'),
  ) as { events_by_name: Record<string, number>; events_total: number };

  it('a file of fewer than SMALL_BLOCK_MAX_EVENTS events is written in 64 KiB blocks, every event trace-cmd reports there', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-ingest-block-'));
    try {
      // On the store worker, as the 1M-event files the block size was measured on.
      const r = await ingestFile(V7, { dataDir: dir, worker: true });
      const engine = await openDuckDb(path.join(dir, 'traces', r.id, 'trace.duckdb'), { readOnly: true });
      try {
        const [{ block_size }] = await engine.query<{ block_size: bigint }>(
          'SELECT block_size FROM pragma_database_size()',
        );
        expect(Number(block_size)).toBe(65_536);
        const rows = await engine.query<{ name: string; n: bigint }>(
          'SELECT name, count(*) AS n FROM ftrace_event GROUP BY name',
        );
        expect(Object.fromEntries(rows.map((x) => [x.name, Number(x.n)]))).toEqual(counts.events_by_name);
      } finally {
        engine.close();
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a Perfetto file of fewer than PERFETTO_SMALL_BLOCK_MAX_EVENTS events is written in 64 KiB blocks too, every event trace_processor reads there', async () => {
    const pftrace = path.resolve(__dirname, '../../fixtures/perfetto_reclaim.pftrace');
    const tp = queryTraceProcessor(pftrace, ['select name, count(*) as n from ftrace_event group by name'])[0]!;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-ingest-block-'));
    try {
      const r = await ingestFile(pftrace, { dataDir: dir });
      const engine = await openDuckDb(path.join(dir, 'traces', r.id, 'trace.duckdb'), { readOnly: true });
      try {
        const [{ block_size }] = await engine.query<{ block_size: bigint }>(
          'SELECT block_size FROM pragma_database_size()',
        );
        expect(Number(block_size)).toBe(65_536);
        const rows = await engine.query<{ name: string; n: bigint }>(
          'SELECT name, count(*) AS n FROM ftrace_event GROUP BY name',
        );
        expect(Object.fromEntries(rows.map((x) => [x.name, Number(x.n)]))).toEqual(
          Object.fromEntries(tp.map((x) => [x.name, Number(x.n)])),
        );
      } finally {
        engine.close();
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
