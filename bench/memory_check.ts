/**
 * Peak memory of the ingest at 1/4, 1x and 2x the bench's trace.dat v6
 * (2.5M, 10M and 20M events): issue 2 asks for peak memory bounded
 * independently of the file's size. Each ingest runs in its own child
 * process (ingest_bench.ts --child), so each peak RSS is its own; it includes
 * DuckDB's native memory.
 *
 *   npx tsx bench/memory_check.ts        (~2.5 min; makes bench/out/large.v6.x<2N>.dat, 1.4 GB, if absent)
 *
 * Needs the 1x and 1/4 files of `npm run bench` (bench/make_large_traces.ts).
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { ingestPeakRssLine } from './peak_rss.ts';
import { OUT_DIR, writeV6Copies } from './make_large_traces.ts';

async function main(): Promise<void> {
  // The files make_large_traces.ts made (its manifest): the largest v6 is the bench's 1x.
  const manifestFile = path.join(OUT_DIR, 'manifest.json');
  const made = fs.existsSync(manifestFile)
    ? Object.keys(JSON.parse(fs.readFileSync(manifestFile, 'utf8')) as object)
    : [];
  const copiesOf = (f: string) => Number(/\.[xq](\d+)\.dat$/.exec(f)?.[1] ?? 0);
  const present = made.filter((f) => fs.existsSync(path.join(OUT_DIR, f)));
  const full = present.filter((f) => /^large\.v6\.x\d+\.dat$/.test(f)).sort((a, b) => copiesOf(b) - copiesOf(a))[0];
  const quarter = present.find((f) => /^large\.v6\.q\d+\.dat$/.test(f));
  if (!full || !quarter)
    throw new Error('run `npm run bench` (or `npx tsx bench/make_large_traces.ts`) first: no large v6 in bench/out');
  const copies = Number(/x(\d+)/.exec(full)![1]);
  const double = path.join(OUT_DIR, `large.v6.x${copies * 2}.dat`);
  if (!fs.existsSync(double)) {
    process.stderr.write(`making ${path.relative(process.cwd(), double)} ...\n`);
    await writeV6Copies(copies * 2, `${double}.tmp`);
    await fsp.rename(`${double}.tmp`, double);
  }
  for (const file of [path.join(OUT_DIR, quarter), path.join(OUT_DIR, full), double]) {
    process.stdout.write(`${await ingestPeakRssLine(file)}\n`);
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`${(e as Error).stack ?? e}\n`);
  process.exit(1);
});
