/**
 * Peak memory of a text ingest whose events carry values that rarely
 * repeat: kmem tracing (`kmalloc: ... ptr=0000000012345678 ...`) prints a
 * distinct pointer per allocation, and every text value of an event without
 * a typed table goes through the args string dictionary. Issue 2 asks for
 * peak memory bounded independently of the file's size; before the
 * dictionary was capped (server/model/args_rows.ts MAX_INTERNED) this grew
 * with the number of events (1.88 GB at 4M events).
 *
 *   npx tsx bench/memory_check_text.ts      (~1.5 min; writes bench/out/kmem-synthetic.<N>M.txt, 0.19 + 0.76 GB)
 *
 * The files are synthetic, the worst case for the dictionary: one kmalloc
 * line per event as a 6.x kernel prints it, every pointer distinct. Each
 * ingest runs in its own child process (ingest_bench.ts --child), so each
 * peak RSS is its own; it includes DuckDB's native memory.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { ingestPeakRssLine } from './peak_rss.ts';
import { OUT_DIR } from './make_large_traces.ts';

/** A tracefs text of `events` kmalloc events on two CPUs, 3 µs apart, each with its own pointer. */
async function writeKmemText(events: number, out: string): Promise<void> {
  const file = fs.createWriteStream(out);
  const write = (s: string) =>
    file.write(s) ? Promise.resolve() : new Promise<void>((r) => file.once('drain', () => r()));
  await write(`# tracer: nop\n#\n# entries-in-buffer/entries-written: ${events}/${events}   #P:2\n#\n`);
  let buf = '';
  for (let i = 0; i < events; i++) {
    const ptr = (0x10000000 + i * 64).toString(16).padStart(16, '0');
    const us = 1000e6 + i * 3;
    const stamp = `${Math.floor(us / 1e6)}.${String(us % 1e6).padStart(6, '0')}`;
    buf += `            bash-1234    [00${i & 1}] .....  ${stamp}: kmalloc: call_site=__alloc_skb+0x4e/0x180 ptr=${ptr} bytes_req=1024 bytes_alloc=1024 gfp_flags=GFP_KERNEL node=-1 accounted=false\n`;
    if (buf.length >= 1 << 20) {
      await write(buf);
      buf = '';
    }
  }
  await write(buf);
  await new Promise<void>((resolve, reject) => file.end((err?: Error | null) => (err ? reject(err) : resolve())));
}

async function main(): Promise<void> {
  await fsp.mkdir(OUT_DIR, { recursive: true });
  for (const millions of [1, 4]) {
    const file = path.join(OUT_DIR, `kmem-synthetic.${millions}M.txt`);
    if (!fs.existsSync(file)) {
      process.stderr.write(`making ${path.relative(process.cwd(), file)} ...\n`);
      await writeKmemText(millions * 1e6, `${file}.tmp`);
      await fsp.rename(`${file}.tmp`, file);
    }
    process.stdout.write(`${await ingestPeakRssLine(file)}\n`);
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`${(e as Error).stack ?? e}\n`);
  process.exit(1);
});
