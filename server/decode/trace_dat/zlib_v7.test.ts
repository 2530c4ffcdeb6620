// trace.dat v7 compressed with zlib.
//
// trace-cmd compresses v7 files with whatever its build links (libzstd
// preferred, else zlib), so a trace-cmd built without libzstd writes zlib
// sections and chunks (zlib's compress2, RFC 1950 streams). Debian's
// trace-cmd here has zstd only and can neither write nor read such a file,
// so these tests rewrite real recordings (test_v7_file.ts recompressV7):
//
// 1. The rewrite itself is checked by trace-cmd: the same recordings
//    rewritten with zstd at another level (every size and offset moves)
//    print exactly the same `trace-cmd report` as the originals.
// 2. The same rewrite with zlib ingests into the same model as the
//    original (every table but trace_info, which names the compression).
// 3. A damaged zlib chunk is reported with its offset and skipped; the
//    other chunks' events are kept.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { openDuckDb } from '../../engine/engine.ts';
import { ingestFile } from '../../ingest/ingest_file.ts';
import { recordingDigest } from '../../model/model_digest.ts';
import { recompressV7, type Recompression } from '../../../tests/support/decode/trace_dat/test_v7_file.ts';

const FIXTURES = path.resolve(__dirname, '../../../fixtures');
/** A single-buffer recording, and one with two buffers (instances). */
const RECORDINGS = ['reclaim_kswapd.v7.dat', 'multi_instance.dat'];

const ZLIB: Recompression = { name: 'zlib', version: '1.2.13', compress: (b) => zlib.deflateSync(b, { level: 9 }) };
const ZSTD_19: Recompression = {
  name: 'zstd',
  version: '1.5.4',
  compress: (b) => {
    const r = spawnSync('zstd', ['-19', '-c', '-q'], { input: b, maxBuffer: 1 << 28 });
    if (r.status !== 0) throw new Error(`zstd -19 failed: ${r.stderr}`);
    return r.stdout;
  },
};

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-zlib-v7-'));
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

function rewrite(name: string, to: Recompression): string {
  const out = path.join(scratch, `${name}.${to.name}.dat`);
  fs.writeFileSync(out, recompressV7(fs.readFileSync(path.join(FIXTURES, name)), to));
  return out;
}

const report = (file: string) => execFileSync('trace-cmd', ['report', file], { encoding: 'utf8', maxBuffer: 1 << 28 });

describe('trace.dat v7 with zlib compression', () => {
  for (const name of RECORDINGS) {
    it(`${name}: rewritten with other chunk sizes, trace-cmd prints the same report`, () => {
      const original = fs.readFileSync(path.join(FIXTURES, name));
      const file = rewrite(name, ZSTD_19);
      // Every chunk and section compressed again: sizes and offsets all moved.
      expect(fs.statSync(file).size).not.toBe(original.length);
      const expected = report(path.join(FIXTURES, name));
      expect(expected.split('\n').length).toBeGreaterThan(3_000);
      expect(report(file)).toBe(expected);
    });

    it(`${name}: zlib ingests into the same model as zstd`, async () => {
      const file = rewrite(name, ZLIB);
      const head = fs.readFileSync(file).subarray(0, 64);
      expect(head.includes(Buffer.from('zlib\0'))).toBe(true);
      const data = path.join(scratch, 'data');
      const a = await ingestFile(path.join(FIXTURES, name), { dataDir: data });
      const b = await ingestFile(file, { dataDir: data });
      expect(b.summary.format).toBe('trace_dat');
      expect(b.summary.formatVersion).toBe('7');
      expect(b.summary.skippedInputs).toBe(0);
      expect(b.summary.eventsTotal).toBe(a.summary.eventsTotal);
      expect(b.summary.eventsByName).toEqual(a.summary.eventsByName);
      expect(b.summary.meta.compression).toBe('zlib 1.2.13');
      // Every table alike but ftrace_event's source_where: a record's byte
      // offset in the file, which the rewrite moves.
      const { ftrace_event: eventsA, ...restA } = await recordingDigest(a.dbPath);
      const { ftrace_event: eventsB, ...restB } = await recordingDigest(b.dbPath);
      expect(restB).toEqual(restA);
      expect(eventsB).not.toEqual(eventsA);
      expect(await eventsWithoutOffsets(b.dbPath)).toEqual(await eventsWithoutOffsets(a.dbPath));
    });
  }

  it('a damaged zlib chunk is reported at its offset and skipped; the rest is kept', async () => {
    const file = rewrite('reclaim_kswapd.v7.dat', ZLIB);
    const bytes = fs.readFileSync(file);
    // The second CPU's first chunk: its offset is in the BUFFER option, found here
    // the way a reader finds it (a page-aligned chunk count after CPU 0's chunks).
    const clean = await ingestFile(file, { dataDir: path.join(scratch, 'data') });
    const cpu1 = secondCpuData(bytes);
    const chunkAt = cpu1 + 4;
    const csize = bytes.readUInt32LE(chunkAt);
    // Flip bytes in the middle of the deflate stream: inflate fails (bad data or adler32).
    for (let i = 0; i < 16; i++) bytes[chunkAt + 8 + (csize >> 1) + i]! ^= 0xa5;
    const damaged = path.join(scratch, 'damaged.zlib.dat');
    fs.writeFileSync(damaged, bytes);
    const r = await ingestFile(damaged, { dataDir: path.join(scratch, 'data') });
    expect(r.summary.skippedInputs).toBe(1);
    const [skip] = r.summary.firstSkipped;
    expect(skip!.unit).toBe('offset');
    expect(skip!.where).toBe(chunkAt);
    expect(skip!.reason).toMatch(/^cpu 1: bad compressed chunk \(zlib decompression failed: .*\); chunk skipped$/);
    // One chunk's pages lost, everything else kept.
    expect(r.summary.eventsTotal).toBeLessThan(clean.summary.eventsTotal);
    expect(r.summary.eventsTotal).toBeGreaterThan(clean.summary.eventsTotal * 0.5);
  });
});

/** ftrace_event's rows but for source_where: a count and an order-independent digest. */
async function eventsWithoutOffsets(dbPath: string): Promise<string> {
  const engine = await openDuckDb(dbPath, { readOnly: true });
  try {
    const [row] = await engine.query<{ n: bigint; h: string }>(
      `SELECT count(*) AS n, sum(md5_number_lower(CAST(t AS VARCHAR)))::VARCHAR AS h FROM (SELECT * EXCLUDE (source_where) FROM ftrace_event) t`,
    );
    return `${row!.n} rows, ${row!.h}`;
  } finally {
    engine.close();
  }
}

/** Offset of CPU 1's data (its chunk count) in a rewritten single-buffer v7 file. */
function secondCpuData(b: Buffer): number {
  // The last options section holds the BUFFER option; find it by its clock name.
  const at = b.lastIndexOf(Buffer.from('\0local\0'));
  if (at < 0) throw new Error('no BUFFER option with clock "local"');
  const p = at + '\0local\0'.length + 4; // page size, then the CPU count
  const count = b.readUInt32LE(p);
  expect(count).toBe(2);
  return Number(b.readBigUInt64LE(p + 4 + 20 + 4));
}
