// Compressed copies of real traces (fixtures/compressed, made by
// fixtures/recording/make_compressed.sh from tracefs_tgid.txt and
// reclaim_kswapd.v6.dat), whole and cut off part-way, through the whole
// ingest. A whole copy builds the same model as the plain file; a cut-off
// copy ingests what was decompressed before the cut and reports the cut as
// one skipped input, or, when nothing before it is readable, fails naming
// the file and the compressed offset. Never a crash or a hang (an xz
// trace.dat once left the process waiting forever).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { constants, gunzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { DecodeError } from '../../server/decode/decoded_event.ts';
import { openDuckDb } from '../../server/engine/engine.ts';
import { ingestFile, type IngestResult } from '../../server/ingest/ingest_file.ts';
import { recordingDigest } from '../../server/model/model_digest.ts';
import { FIXTURES } from './attached_models.ts';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-compressed-'));
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

const PLAIN = { tracefs: 'tracefs_tgid.txt', dat: 'reclaim_kswapd.v6.dat' } as const;
const KINDS = ['gz', 'zst', 'xz'] as const;
/** The compression each fixture suffix stands for, as the ingest names it. */
const COMPRESSION = { gz: 'gzip', zst: 'zstd', xz: 'xz' } as const;

/** The model's digest without the facts that name the file or its compression. */
const digestOf = (r: IngestResult) => recordingDigest(r.dbPath);

async function problemsOf(
  r: IngestResult,
): Promise<{ source_where: bigint; unit: string; reason: string; excerpt: string }[]> {
  const engine = await openDuckDb(r.dbPath, { readOnly: true });
  try {
    return await engine.query(`SELECT source_where, unit, reason, excerpt FROM ingest_problem ORDER BY source_where`);
  } finally {
    engine.close();
  }
}

describe('compressed copies, whole', () => {
  for (const [what, plain] of Object.entries(PLAIN)) {
    it(`${what}: gzip, zstd and xz build the model the plain file builds`, async () => {
      const expected = await digestOf(await ingestFile(path.join(FIXTURES, plain), { dataDir }));
      for (const kind of KINDS) {
        const r = await ingestFile(path.join(FIXTURES, 'compressed', `${what}_${kind}.bin`), { dataDir });
        expect(r.summary.compression).toEqual([COMPRESSION[kind]]);
        expect(r.summary.cutOff).toBeNull();
        expect(await digestOf(r), `${what}_${kind}.bin`).toEqual(expected);
      }
    });
  }
});

describe('compressed copies, cut off', () => {
  const CUTS = [0.3, 0.8, 0.99];

  it('gzip text: every whole line before the cut is an event, the cut line is the excerpt, the cut is one problem', async () => {
    const whole = fs.readFileSync(path.join(FIXTURES, 'compressed', 'tracefs_gz.bin'));
    for (const keep of CUTS) {
      const cut = Math.floor(whole.length * keep);
      const file = path.join(dataDir, `cut-${cut}.tracefs.gz`);
      fs.writeFileSync(file, whole.subarray(0, cut));
      // What zcat shows before "unexpected end of file", decompressed independently.
      const prefix = gunzipSync(whole.subarray(0, cut), { finishFlush: constants.Z_SYNC_FLUSH }).toString('latin1');
      const lines = prefix.split('\n');
      const cutLine = lines.pop()!;
      const expectedEvents = lines.filter((l) => l.length > 0 && !l.startsWith('#')).length;

      const r = await ingestFile(file, { dataDir });
      expect(r.summary.eventsTotal).toBe(expectedEvents);
      expect(r.summary.cutOff).toMatchObject({
        where: cut,
        unit: 'offset',
        reason: expect.stringMatching(/^corrupt or truncated gzip stream/),
      });
      const problems = await problemsOf(r);
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatchObject({ source_where: BigInt(cut), unit: 'offset' });
      expect(problems[0]!.reason).toMatch(
        /^corrupt or truncated gzip stream .*unexpected end of file; the input ends here/,
      );
      if (cutLine.length > 0) expect(cutLine.startsWith(problems[0]!.excerpt)).toBe(true);
    }
  });

  for (const what of ['tracefs', 'dat'] as const) {
    for (const kind of KINDS) {
      it(`${what}_${kind}.bin: fewer events and the cut reported, or a clear failure`, async () => {
        const whole = fs.readFileSync(path.join(FIXTURES, 'compressed', `${what}_${kind}.bin`));
        const full = what === 'dat' ? 21007 : 5869; // fixtures/README.md
        let ingested = 0;
        for (const keep of [0.02, ...CUTS]) {
          const cut = Math.floor(whole.length * keep);
          const file = path.join(dataDir, `cut-${cut}-${what}.${kind}`);
          fs.writeFileSync(file, whole.subarray(0, cut));
          const name = COMPRESSION[kind];
          let r: IngestResult;
          try {
            r = await ingestFile(file, { dataDir });
          } catch (e) {
            expect(e).toBeInstanceOf(DecodeError);
            expect((e as Error).message).toMatch(
              new RegExp(`^${file}: offset \\d+: corrupt or truncated ${name} stream`),
            );
            continue;
          }
          ingested++;
          expect(r.summary.eventsTotal).toBeGreaterThan(0);
          expect(r.summary.eventsTotal).toBeLessThan(full);
          const problems = await problemsOf(r);
          const cutProblems = problems.filter((p) => p.reason.startsWith(`corrupt or truncated ${name} stream`));
          expect(cutProblems).toHaveLength(1);
          expect(cutProblems[0]!.reason).toContain('the input ends here');
          // The trace.dat decoder's own problems are at offsets of the decompressed data, and say so.
          for (const p of problems)
            if (p !== cutProblems[0]) expect(p.reason).toMatch(/\(offset in the decompressed trace\.dat\)$/);
        }
        // The larger cuts of each file leave something to ingest.
        expect(ingested).toBeGreaterThanOrEqual(what === 'dat' ? 1 : 3);
      });
    }
  }
});
