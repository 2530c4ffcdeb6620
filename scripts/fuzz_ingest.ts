// `npm run fuzz -- [--seed N] [--count N] [--seconds S] [--bombs] [--max-rss-mb M] [FILE...]`:
// mutation fuzz of ingest.
//
// Each mutant of one of the FILEs (cut short, bytes flipped in the first 64 KiB
// or anywhere, a range cut out, a run of 00/ff inserted) is ingested in this
// process. It must either ingest or fail with a DecodeError/IngestError that
// names the mutant's path; anything else (another error type, a hang past 60 s,
// a crash of the process) is a bug. Prints a line every 20 mutants and the bad
// ones at the end (their files are kept in the work dir); exits 1 if any.
// It found the crash and the hang fixed in the fourteenth session's commits
// d289ec0 and 94e8ca9.
//
// --bombs adds the decompression cases (issue 27): zstd frames of RLE blocks
// (any size and window, some in gzip), gzip bombs, mutated compressed
// fixtures, trace.dat v7 chunk headers claiming other sizes, and v7 buffers
// whose CPU entries share, repeat or inflate chunks. Every mutant's peak RSS
// is sampled too: past --max-rss-mb (default 700: ~200 MB of ingest plus the
// budgets) it is a bug. --seconds stops after that long (the CI run: `npm run
// fuzz:ci`, 45 s with a fixed seed, part of `npm test`). Without FILEs it
// uses the fixtures.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { DecodeError } from '../server/decode/decoded_event.ts';
import {
  gzipBomb,
  textHeaderZstd,
  v7Chunk,
  v7WithCraftedBuffer,
  zstdRleFrame,
} from '../tests/support/decode/test_bombs.ts';
import { IngestError, ingestFile } from '../server/ingest/ingest_file.ts';

const { values, positionals } = parseArgs({
  options: {
    seed: { type: 'string', default: '12345' },
    count: { type: 'string', default: '200' },
    seconds: { type: 'string' },
    bombs: { type: 'boolean', default: false },
    'max-rss-mb': { type: 'string', default: '700' },
  },
  allowPositionals: true,
});
const FIXTURES = path.resolve(import.meta.dirname, '../fixtures');
const seeds =
  positionals.length > 0
    ? positionals
    : [
        'reclaim_kswapd.v7.dat',
        'reclaim_kswapd.v6.dat',
        'memcg_reclaim.v7.dat',
        'ftrace_specials.tracefs.txt',
        'compressed/dat_gz.bin',
        'compressed/dat_xz.bin',
        'compressed/dat_zst.bin',
        'compressed/tracefs_zst.bin',
      ].map((f) => path.join(FIXTURES, f));
const deadline = values.seconds ? Date.now() + Number(values.seconds) * 1000 : Infinity;
const maxRss = Number(values['max-rss-mb']) * 2 ** 20;
const v7Seeds = seeds.filter((f) => isLittleEndianV7(fs.readFileSync(f)));
let state = Number(values.seed);
const rand = (n: number) => {
  state = (state * 1103515245 + 12345) & 0x7fffffff;
  return Math.floor((state / 0x80000000) * n); // the high bits: an LCG's low bits repeat with a short period
};
const HANG_MS = 60_000;
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-fuzz-'));
const dataDir = path.join(work, 'data');

function isLittleEndianV7(b: Buffer): boolean {
  return (
    b.length > 12 && b.toString('latin1', 3, 10) === 'tracing' && b.toString('latin1', 10, 12) === '7\0' && b[12] === 0
  );
}

const MiB = 2 ** 20;
const pick = <T>(xs: readonly T[]): T => xs[rand(xs.length)]!;

/** The compressed chunks of a little-endian v7 file: where each chunk header is (walked from the BUFFER options). */
function v7ChunkHeaders(b: Buffer): number[] {
  // Found by content: a chunk header is (csize, usize) with usize a multiple of 4096 followed by a zstd magic.
  const out: number[] = [];
  for (
    let i = b.indexOf(Buffer.from([0x28, 0xb5, 0x2f, 0xfd]));
    i >= 8 && out.length < 10_000;
    i = b.indexOf(Buffer.from([0x28, 0xb5, 0x2f, 0xfd]), i + 4)
  ) {
    const usize = b.readUInt32LE(i - 4);
    if (usize > 0 && usize % 4096 === 0) out.push(i - 8);
  }
  return out;
}

/** The decompression and v7 chunk cases (--bombs). */
function bomb(): { bytes: Buffer; what: string } {
  const base = v7Seeds.length ? fs.readFileSync(pick(v7Seeds)) : null;
  switch (rand(5)) {
    case 0: {
      const fill = pick([0x20, 0x20, 0x0a, 0]);
      // Empty lines are decoded at ~8M a second: a GiB of them is minutes of honest work, not a bomb to find.
      const size = (1 + rand(fill === 0x0a ? 32 : 3000)) * MiB;
      const windowLog = rand(4) === 0 ? 10 + rand(22) : 17 + rand(11); // mostly windows a decoder accepts
      const frame = Buffer.concat([
        textHeaderZstd(),
        zstdRleFrame(size, { fill, windowLog, contentSize: rand(4) === 0 }),
      ]);
      const gz = rand(3) === 0;
      return {
        bytes: gz ? gzipSync(frame) : frame,
        what: `zstd RLE frame of ${size / MiB} MiB of 0x${fill.toString(16)}, window 2^${windowLog}${gz ? ', in gzip' : ''}`,
      };
    }
    case 1: {
      const mib = 4 * (1 + rand(400));
      return {
        bytes: Buffer.concat([gzipSync(Buffer.from('# tracer: nop\n#\n')), gzipBomb(mib)]),
        what: `gzip bomb of ${mib} MiB`,
      };
    }
    case 2: {
      if (!base) return mutate(fs.readFileSync(pick(seeds)));
      const b = Buffer.from(base);
      const heads = v7ChunkHeaders(b);
      const k = 1 + rand(4);
      const what: string[] = [];
      for (let j = 0; j < k && heads.length; j++) {
        const at = pick(heads);
        const field = rand(2);
        const v = pick([0, 4096, 40960, 16 * MiB, 16 * MiB + 4096, 2 ** 31, 2 ** 32 - 4096, rand(2 ** 32)]);
        b.writeUInt32LE(v >>> 0, at + field * 4);
        what.push(`${field ? 'usize' : 'csize'}=${v} at ${at}`);
      }
      return { bytes: b, what: `v7 chunk headers: ${what.join(', ')}` };
    }
    default: {
      if (!base) return mutate(fs.readFileSync(pick(seeds)));
      const runs = Array.from({ length: 1 + rand(8) }, () =>
        Array.from({ length: 1 + rand(40) }, () =>
          v7Chunk(rand(8) ? 'zstd' : 'zlib', 4096 * (1 + rand(rand(2) ? 4096 : 64))),
        ),
      );
      const cpus = Array.from({ length: 1 + rand(64) }, () => ({
        cpu: rand(8) === 0 ? 0 : rand(256),
        data: rand(runs.length),
      }));
      return {
        bytes: v7WithCraftedBuffer(base, runs, cpus),
        what: `v7 buffer: ${runs.length} runs of ${runs.map((r) => r.length).join('/')} chunks, ${cpus.length} CPU entries`,
      };
    }
  }
}

function mutate(src: Buffer): { bytes: Buffer; what: string } {
  let b = Buffer.from(src);
  switch (rand(5)) {
    case 0: {
      const at = rand(b.length);
      return { bytes: b.subarray(0, at), what: `cut short at ${at}` };
    }
    case 1: {
      const at: number[] = [];
      for (let j = 0, k = 1 + rand(8); j < k; j++) at.push(rand(Math.min(b.length, 1 << 16)));
      for (const o of at) b[o] = rand(256);
      return { bytes: b, what: `header bytes changed at ${at.join(',')}` };
    }
    case 2: {
      const k = 1 + rand(64);
      for (let j = 0; j < k; j++) b[rand(b.length)] = rand(256);
      return { bytes: b, what: `${k} bytes changed` };
    }
    case 3: {
      const o = rand(b.length);
      const len = rand(4096);
      b = Buffer.concat([b.subarray(0, o), b.subarray(o + len)]);
      return { bytes: b, what: `${len} bytes cut out at ${o}` };
    }
    default: {
      const o = rand(b.length);
      const fill = Buffer.alloc(rand(4096), rand(2) ? 0xff : 0);
      return {
        bytes: Buffer.concat([b.subarray(0, o), fill, b.subarray(o)]),
        what: `${fill.length} bytes inserted at ${o}`,
      };
    }
  }
}

const counts = { ingested: 0, failedClearly: 0 };
const bad: string[] = [];
const total = values.seconds ? Infinity : Number(values.count);
// Peak RSS while each mutant is ingested (the budgets are per input, so the bound is too).
let peak = 0;
const sampler = setInterval(() => {
  peak = Math.max(peak, process.memoryUsage.rss());
}, 10);
sampler.unref();
let i = 0;
for (; i < total && Date.now() < deadline; i++) {
  const seed = values.bombs && i % 2 === 1 ? 'bomb' : seeds[i % seeds.length]!;
  const { bytes, what } = seed === 'bomb' ? bomb() : mutate(fs.readFileSync(seed));
  const file = path.join(work, `mutant-${i}.bin`);
  fs.writeFileSync(file, bytes);
  let outcome: string;
  let keep = false;
  peak = process.memoryUsage.rss();
  try {
    let timer: NodeJS.Timeout | undefined;
    const r = await Promise.race([
      ingestFile(file, { dataDir, force: true }),
      new Promise<never>(
        (_, reject) => (timer = setTimeout(() => reject(new Error(`no answer in ${HANG_MS / 1000} s`)), HANG_MS)),
      ),
    ]).finally(() => clearTimeout(timer));
    counts.ingested++;
    outcome = `ingested ${r.summary.eventsTotal} events, ${r.summary.skippedInputs} skipped`;
  } catch (e) {
    const err = e as Error;
    if ((err instanceof DecodeError || err instanceof IngestError) && err.message.includes(file)) {
      counts.failedClearly++;
      outcome = `failed: ${err.message.slice(file.length + 2, file.length + 122)}`;
    } else {
      keep = true;
      outcome = `BAD: ${(err.stack ?? String(err)).slice(0, 400)}`;
      bad.push(`${file} (${path.basename(seed)}, ${what}): ${outcome}`);
    }
  }
  peak = Math.max(peak, process.memoryUsage.rss());
  if (peak > maxRss && !keep) {
    keep = true;
    outcome = `BAD: peak RSS ${Math.round(peak / MiB)} MB (bound ${Math.round(maxRss / MiB)} MB): ${outcome}`;
    bad.push(`${file} (${path.basename(seed)}, ${what}): ${outcome}`);
  }
  if (!keep) fs.rmSync(file);
  if (i % 20 === 0 || (values.bombs && seed === 'bomb'))
    process.stdout.write(`${i} ${path.basename(seed)} ${what}: ${outcome} [peak ${Math.round(peak / MiB)} MB]\n`);
}
clearInterval(sampler);
process.stdout.write(
  `${i} mutants (seed ${values.seed}${values.bombs ? ', with bombs' : ''}): ${JSON.stringify(counts)}; bad: ${bad.length}\n${bad.join('\n')}\n`,
);
fs.rmSync(dataDir, { recursive: true, force: true });
if (bad.length === 0) fs.rmSync(work, { recursive: true, force: true });
process.exit(bad.length ? 1 : 0);
