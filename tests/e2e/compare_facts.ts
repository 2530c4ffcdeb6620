/**
 * Facts about fixture 17 (fixtures/compare) computed apart from stallscope:
 * awk over `trace-cmd report -t`, for the compare specs to hold the app to.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const FIXTURES = fileURLToPath(new URL('../../fixtures/compare/', import.meta.url));

/** From trace-cmd report -t: super_cache_scan's freed sum and its completed calls (start then end on one task). */
export function awkFacts(file: string): { freed: number; calls: number } {
  const report = execFileSync('trace-cmd', ['report', '-t', '-i', join(FIXTURES, file)], {
    maxBuffer: 1 << 28,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const out = execFileSync(
    'awk',
    [
      `/mm_shrink_slab_(start|end): +super_cache_scan/ || /mm_shrink_slab_(start|end):/ {
         match($0, /-[0-9]+ +\\[/); pid = substr($0, RSTART + 1, RLENGTH - 3)
         s = ($0 ~ /super_cache_scan/)
         if ($0 ~ /mm_shrink_slab_start:/) { open[pid] = s; next }
         if ((pid in open) && open[pid] && s) calls++
         delete open[pid]
         if (s) { r = $0; sub(/.*return val /, "", r); freed += r }
       }
       END { print freed + 0, calls + 0 }`,
    ],
    { input: report, encoding: 'utf8' },
  );
  const [freed, calls] = out.trim().split(' ').map(Number);
  return { freed: freed!, calls: calls! };
}
