/**
 * Share links that carry their notes (shared/links/link_codec.ts): how long
 * links get, how many notes fit in 8 KB, how long building and decoding take,
 * and what a deflate bomb costs. Informational figures (issue 37), not part of
 * `npm run bench`:  node --expose-gc node_modules/tsx/dist/cli.mjs bench/link_codec_figures.ts
 */
import { loadavg } from 'node:os';
import { buildShareLink, decodeLinkFragment, inflateRawBounded, LINK_LIMITS } from '../shared/links/link_codec.ts';
import { deflateRawSync } from 'node:zlib';
const sha = 'fdfc31604f5d4425026f151b1d460a1665b4e284bec73b687f709e198e74ce25';
const facts = {
  sha256: sha,
  name: 'reclaim_kswapd.full.v7.dat',
  size: 551918,
  format: 'trace_dat v7',
  kernel: 'Linux vm 6.18.44-fc-v595 x86_64',
  cpus: 2,
  events: 40123,
};
const base = `http://127.0.0.1:7420/?trace=${sha}&t0=223336000&t1=286829000&sel=finding:0&note=AbCdEfGhIjKlMnOpQrStU_`;
const prose =
  'kswapd escalates here: priority drops from 12 to 3 while shrink_slab runs super_cache_scan for 37 ms; direct reclaim stalls pile up behind it on both CPUs. ';
const note = (i: number, text: string) => ({
  id: `n${String(i).padStart(21, '0')}`,
  anchor: { kind: 'finding' as const, finding: i, t0: 236407909 + i, t1: 273756909 + i },
  text,
  author: 'Alice Reviewer',
  created_at: '2024-05-01T10:12:00.000Z',
  updated_at: '2024-05-01T10:12:00.000Z',
  version: 1,
});
const fo = await buildShareLink(base, facts, []);
console.log('facts only: url', fo.url.length, 'chars; fragment', new URL(fo.url).hash.length);
const one = await buildShareLink(base, facts, [note(0, prose.repeat(2))]);
console.log('one 2-sentence note (', prose.length * 2, 'chars): url', one.url.length);
// how many distinct 300-char notes fit
const words =
  'kswapd shrinker super_cache_scan direct reclaim stall priority drops memcg writeback pageout order GFP_KERNEL inode dentry slab lru isolate compaction zone watermark high low min migrate pingpong numa node cpu runqueue latency ms us fsync xfs journal the a of to in while after before because when we see it this that here again'.split(
    ' ',
  );
let y = 3;
const sentence = (n: number) =>
  Array.from({ length: n }, () => {
    y = (y * 1103515245 + 12345) >>> 0;
    return words[(y >>> 16) % words.length];
  }).join(' ') + '.';
const many = Array.from({ length: 100 }, (_, i) => note(i, `${sentence(15)} ${sentence(15)}`));
console.log('varied notes: mean', Math.round(many.reduce((a, n) => a + n.text.length, 0) / many.length), 'chars');
const m = await buildShareLink(base, facts, many);
console.log('varied ~2-sentence notes that fit:', m.included, 'url', m.url.length);
// largest English note that fits
let lo = 0,
  hi = 16000;
while (lo < hi) {
  const mid = Math.ceil((lo + hi) / 2);
  const r = await buildShareLink(base, facts, [
    note(0, (prose + 'and more words follow in the review thread about shrinkers. ').repeat(60).slice(0, mid)),
  ]);
  if (r.included) lo = mid;
  else hi = mid - 1;
}
console.log('largest repetitive-prose note that fits:', lo);
let x = 7;
const noise = (n: number) =>
  Array.from({ length: n }, () => {
    x = (x * 1103515245 + 12345) >>> 0;
    return String.fromCharCode(33 + ((x >>> 16) % 90));
  }).join('');
lo = 0;
hi = 16000;
while (lo < hi) {
  const mid = Math.ceil((lo + hi) / 2);
  const r = await buildShareLink(base, facts, [note(0, noise(mid))]);
  if (r.included) lo = mid;
  else hi = mid - 1;
}
console.log('largest incompressible note that fits:', lo);
// decode time of a full link
let t = performance.now();
for (let i = 0; i < 100; i++) await decodeLinkFragment(new URL(m.url).hash);
console.log('decode of the', m.url.length, 'char link:', ((performance.now() - t) / 100).toFixed(2), 'ms');
t = performance.now();
for (let i = 0; i < 20; i++) await buildShareLink(base, facts, many);
console.log('build with 100 candidate notes:', ((performance.now() - t) / 20).toFixed(1), 'ms');
// bomb
const bomb = deflateRawSync(Buffer.alloc(64 << 20), { level: 9 });
console.log('bomb: 64 MiB of zeros ->', bomb.length, 'bytes compressed; ratio', ((64 << 20) / bomb.length).toFixed(0));
global.gc?.();
const rss0 = process.memoryUsage().rss;
await inflateRawBounded(bomb.subarray(0, 600), LINK_LIMITS.jsonBytes);
t = performance.now();
const r = await inflateRawBounded(bomb.subarray(0, 6000), LINK_LIMITS.jsonBytes);
console.log(
  '6000-byte slice of it:',
  r,
  'in',
  (performance.now() - t).toFixed(1),
  'ms; rss delta',
  ((process.memoryUsage().rss - rss0) / 1024).toFixed(0),
  'KiB',
);
t = performance.now();
const r2 = await inflateRawBounded(bomb, LINK_LIMITS.jsonBytes);
console.log(
  'whole 64 MiB bomb:',
  r2,
  'in',
  (performance.now() - t).toFixed(1),
  'ms; rss delta',
  ((process.memoryUsage().rss - rss0) / 1024).toFixed(0),
  'KiB',
);
console.log(
  'load average',
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' '),
);
