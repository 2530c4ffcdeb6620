// `npm run fuzz -- [--seed N] [--count N] FILE...`: mutation fuzz of ingest.
//
// Each mutant of one of the FILEs (cut short, bytes flipped in the first 64 KiB
// or anywhere, a range cut out, a run of 00/ff inserted) is ingested in this
// process. It must either ingest or fail with a DecodeError/IngestError that
// names the mutant's path; anything else (another error type, a hang past 60 s,
// a crash of the process) is a bug. Prints a line every 20 mutants and the bad
// ones at the end (their files are kept in the work dir); exits 1 if any.
// Not part of `npm test`: it is a search, not a check (it found the crash and
// the hang fixed in the fourteenth session's commits d289ec0 and 94e8ca9).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { DecodeError } from '../server/decode/decoded_event.ts';
import { IngestError, ingestFile } from '../server/ingest/ingest_file.ts';

const { values, positionals: seeds } = parseArgs({
  options: { seed: { type: 'string', default: '12345' }, count: { type: 'string', default: '200' } },
  allowPositionals: true,
});
if (seeds.length === 0) {
  process.stderr.write('usage: npm run fuzz -- [--seed N] [--count N] FILE...\n');
  process.exit(2);
}
let state = Number(values.seed);
const rand = (n: number) => {
  state = (state * 1103515245 + 12345) & 0x7fffffff;
  return state % n;
};
const HANG_MS = 60_000;
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-fuzz-'));
const dataDir = path.join(work, 'data');

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
      return { bytes: Buffer.concat([b.subarray(0, o), fill, b.subarray(o)]), what: `${fill.length} bytes inserted at ${o}` };
    }
  }
}

const counts = { ingested: 0, failedClearly: 0 };
const bad: string[] = [];
const total = Number(values.count);
for (let i = 0; i < total; i++) {
  const seed = seeds[i % seeds.length]!;
  const { bytes, what } = mutate(fs.readFileSync(seed));
  const file = path.join(work, `mutant-${i}.bin`);
  fs.writeFileSync(file, bytes);
  let outcome: string;
  let keep = false;
  try {
    let timer: NodeJS.Timeout | undefined;
    const r = await Promise.race([
      ingestFile(file, { dataDir, force: true }),
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer in ${HANG_MS / 1000} s`)), HANG_MS))),
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
  if (!keep) fs.rmSync(file);
  if (i % 20 === 0) process.stdout.write(`${i} ${path.basename(seed)} ${what}: ${outcome}\n`);
}
process.stdout.write(`${JSON.stringify(counts)}; bad: ${bad.length}\n${bad.join('\n')}\n`);
fs.rmSync(dataDir, { recursive: true, force: true });
if (bad.length === 0) fs.rmSync(work, { recursive: true, force: true });
process.exit(bad.length ? 1 : 0);
