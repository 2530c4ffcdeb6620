/**
 * Triage on real recordings, against facts computed independently of
 * stallscope: awk over `trace-cmd report` text (the committed reports, or
 * trace-cmd run on the trace.dat here).
 *
 * - the overview's numbers (metrics) and lines: stall counts, rates and
 *   nearest-rank percentiles, shrinker calls per shrinker, kswapd episodes;
 * - the top finding by impact of each detector (impact as each detector's
 *   @impact line defines it, recomputed by awk);
 * - a memcg-only trace: memcg findings never say kswapd, and their severity
 *   follows the time spent at low priority;
 * - wakeup ping-pong (jbd2 under ext4 fsync loops) rated above load / idle
 *   balancing (a busy node build moved by the idle task; a parallel C build);
 *   unbound kworkers' bursts info;
 * - ping-pong severities on the fsync_timers recording: bounces, waits per
 *   move and in all counted by awk, the rule applied to them.
 *
 * Exact comparisons ingest the report text itself (microsecond timestamps,
 * the same numbers awk reads); the trace.dat of the same recording must then
 * agree within the microsecond the report rounds to.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { type Engine, openDuckDb } from '../../server/engine/engine.ts';
import type { Finding } from '../../server/findings/finding.ts';
import { metricValue } from '../../server/findings/metrics.ts';
import { type RunResult, runDetectors } from '../../server/findings/run_detectors.ts';
import { ingestFile } from '../../server/ingest/ingest_file.ts';
import { PARSE, awk, awkScript, ns, pct, traceCmdReport } from './report_awk.ts';

const FIXTURES = fileURLToPath(new URL('../../fixtures/', import.meta.url));
const BURSTS_AWK = join(FIXTURES, 'recording/migration_pingpong_bursts.awk');
const dataDir = mkdtempSync(join(tmpdir(), 'stallscope-golden-triage-'));
const engines: Engine[] = [];

afterAll(() => {
  for (const e of engines) e.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const runs = new Map<string, Promise<RunResult>>();
function analyze(file: string): Promise<RunResult> {
  let r = runs.get(file);
  if (!r) {
    r = (async () => {
      const { dbPath } = await ingestFile(file, { dataDir });
      const engine = await openDuckDb(dbPath, { readOnly: true });
      engines.push(engine);
      return runDetectors(engine, {});
    })();
    runs.set(file, r);
  }
  return r;
}

const fx = (name: string) => join(FIXTURES, name);
const US = 1_000n;
const SEV: Record<string, number> = { critical: 0, warn: 1, info: 2 };
const maxBy = (fs: Finding[], key: (f: Finding) => bigint) => fs.reduce((a, b) => (key(b) > key(a) ? b : a));

/** First and last event timestamp of a report, ns. */
function bounds(report: string): { first: bigint; last: bigint } {
  const [a, b] = awk(
    `${PARSE} { parse(); if (ev != "") { if (first == "") first = ts; last = ts } } END { print first, last }`,
    report,
  )[0]!.split(' ');
  return { first: ns(a!), last: ns(b!) };
}

describe('reclaim_kswapd (6.x): the overview and the top findings agree with awk', () => {
  const report = fx('reclaim_kswapd.report.txt');

  /** Completed direct reclaim stalls: a begin closed by the same task's next reclaim event, an end. */
  const stalls = () =>
    awk(
      `${PARSE} { parse() }
     ev == "mm_vmscan_direct_reclaim_begin" { b[pid] = t; comm[pid] = task }
     ev == "mm_vmscan_direct_reclaim_end" { if (pid in b) printf "%.0f %s %s\\n", t - b[pid], pid, comm[pid]; else if (!(pid in seen)) printf "begin_missing %.0f %s\\n", t, pid; delete b[pid] }
     ev ~ /^mm_vmscan_direct_reclaim_/ { seen[pid] = 1 }`,
      report,
    );

  /** Completed shrinker calls: symbol (without +0x..), duration, pid, task. */
  const calls = () =>
    awk(
      `${PARSE} { parse() }
     ev == "mm_shrink_slab_start" || ev == "mm_shrink_slab_end" {
       for (i = 1; i <= NF; i++) if ($i == ev ":") { sym = $(i + 1); break }
       sub(/\\+0x.*/, "", sym)
       if (ev == "mm_shrink_slab_start") { s[pid] = t; ss[pid] = sym }
       else { if ((pid in s) && ss[pid] == sym) printf "%s %.0f %s %s\\n", sym, t - s[pid], pid, task; delete s[pid] }
     }`,
      report,
    ).map((l) => {
      const [sym, d, pid, task] = l.split(' ');
      return { sym: sym!, dur: BigInt(d!), pid: Number(pid), task: task! };
    });

  it(
    'direct reclaim: stalls, tasks, rate, p50/p95/p99/max, as metrics and as the overview line',
    { timeout: 240_000 },
    async () => {
      const rows = stalls().filter((l) => !l.startsWith('begin_missing'));
      const durs = rows.map((l) => BigInt(l.split(' ')[0]!)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      const tasks = new Set(rows.map((l) => l.split(' ')[1])).size;
      const { first, last } = bounds(report);
      const r = await analyze(report);
      const m = (id: string) => metricValue(r.metrics, `reclaim_stall.direct.${id}`);
      expect(m('stalls')).toBe(durs.length);
      expect(m('tasks')).toBe(tasks);
      expect(m('stall_p50_ns')).toBe(Number(pct(durs, 50)));
      expect(m('stall_p95_ns')).toBe(Number(pct(durs, 95)));
      expect(m('stall_p99_ns')).toBe(Number(pct(durs, 99)));
      expect(m('stall_max_ns')).toBe(Number(durs.at(-1)));
      expect(m('stalled_ns')).toBe(Number(durs.reduce((a, b) => a + b, 0n)));
      expect(m('stalls_per_s')).toBeCloseTo(durs.length / (Number(last - first) / 1e9), 6);
      const line = r.overview.lines.find((l) => l.detector === 'direct_reclaim_stall')!;
      expect(line.text).toContain(
        `direct reclaim: ${durs.length} stalls in ${tasks} tasks, ${Math.round(durs.length / (Number(last - first) / 1e9))}/s`,
      );
      expect(line.text).toContain(`/${(Number(durs.at(-1)) / 1e6).toFixed(1)} ms`);
    },
  );

  it(
    "shrinkers: calls, calls over 10 ms, longest, per shrinker; the overview names the longest call's task",
    { timeout: 240_000 },
    async () => {
      const c = calls();
      const syms = [...new Set(c.map((x) => x.sym))];
      const r = await analyze(report);
      for (const sym of syms) {
        const mine = c
          .filter((x) => x.sym === sym)
          .map((x) => x.dur)
          .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
        expect(metricValue(r.metrics, 'shrinker.calls', sym), sym).toBe(mine.length);
        expect(metricValue(r.metrics, 'shrinker.calls_over_warn', sym), sym).toBe(
          mine.filter((d) => d >= 10_000_000n).length,
        );
        expect(metricValue(r.metrics, 'shrinker.call_max_ns', sym), sym).toBe(Number(mine.at(-1)));
        expect(metricValue(r.metrics, 'shrinker.call_p99_ns', sym), sym).toBe(Number(pct(mine, 99)));
      }
      expect(metricValue(r.metrics, 'shrinker.calls')).toBe(c.length);
      const longest = c.reduce((a, b) => (b.dur > a.dur ? b : a));
      const over = c.filter((x) => x.sym === longest.sym && x.dur >= 10_000_000n).length;
      const line = r.overview.lines.find((l) => l.detector === 'shrinker_blocking')!;
      expect(line.text).toBe(
        `${longest.sym}: ${c.filter((x) => x.sym === longest.sym).length.toLocaleString('en')} calls, ${over} over 10 ms, worst ${(Number(longest.dur) / 1e6).toFixed(1)} ms in ${longest.task.replace(/-\d+$/, '')}`,
      );
      expect(line.filter).toEqual({ detector: 'shrinker_blocking', shrinker: longest.sym });
    },
  );

  it(
    'kswapd: episodes and the lowest priority; the top escalation by time at priority 6 or lower',
    { timeout: 240_000 },
    async () => {
      // Episodes of each kswapd thread (wake -> sleep / next wake; or from its first reclaim event after a
      // sleep or the trace start). Per episode: each event's priority (lru_shrink_*: priority=, shrink_slab_start:
      // "priority N"); at its end, the steps (each new lowest priority, with its first ts), and for the first
      // step at <= 6 the start of its pass: the last event at a higher priority before it (its first when that
      // priority also came after). Time at <= 6 = the episode's last reclaim event - the earliest such start.
      const out = awk(
        `${PARSE}
       function close_ep(p,   k, s, q, h, best, v, low) {
         if (!open[p]) return
         episodes++
         if (minp[p] < gmin) gmin = minp[p]
         low = -1
         for (k = 1; k <= nst[p]; k++) {
           s = st[p, k]; if (s > 6) continue
           best = start[p]
           for (h = s + 1; h <= 12; h++) if ((p, h) in fi && fi[p, h] < sf[p, k]) { v = (la[p, h] < sf[p, k]) ? la[p, h] : fi[p, h]; if (v > best) best = v }
           if (lastev[p] - best > low) low = lastev[p] - best
         }
         if (low >= 0) printf "esc %.0f %.0f %d\\n", start[p], low, minp[p]
         for (h = 0; h <= 12; h++) { delete fi[p, h]; delete la[p, h] }
         open[p] = 0
       }
       function begin_ep(p, at) { open[p] = 1; start[p] = at; minp[p] = 99; nst[p] = 0; lastev[p] = at }
       BEGIN { gmin = 99 }
       { parse() }
       task ~ /^kswapd/ && ev == "mm_vmscan_kswapd_wake" { close_ep(pid); begin_ep(pid, t); next }
       task ~ /^kswapd/ && ev == "mm_vmscan_kswapd_sleep" { close_ep(pid); next }
       task ~ /^kswapd/ && ev ~ /^(mm_vmscan_lru_shrink_(in)?active|mm_shrink_slab_(start|end))$/ {
         if (!open[pid]) begin_ep(pid, t)
         lastev[pid] = t
         p = field("priority"); if (p == "" && ev == "mm_shrink_slab_start" && match($0, /priority [0-9]+/)) p = substr($0, RSTART + 9, RLENGTH - 9)
         if (p == "") next
         p += 0
         if (!((pid, p) in fi)) fi[pid, p] = t
         la[pid, p] = t
         if (p < minp[pid]) { minp[pid] = p; nst[pid]++; st[pid, nst[pid]] = p; sf[pid, nst[pid]] = t }
       }
       END { for (q in open) close_ep(q); printf "episodes %d %d\\n", episodes, gmin }`,
        report,
      );
      const [, episodes, gmin] = out.at(-1)!.split(' ');
      const escs = out
        .filter((l) => l.startsWith('esc '))
        .map((l) => {
          const [, s, low, minp] = l.split(' ');
          return { start: BigInt(s!), low: BigInt(low!), minp: Number(minp) };
        });
      const r = await analyze(report);
      expect(metricValue(r.metrics, 'kswapd.episodes')).toBe(Number(episodes));
      expect(metricValue(r.metrics, 'kswapd.min_priority')).toBe(Number(gmin));
      const mine = r.findings.filter((f) => f.detector === 'kswapd_escalation' && f.kind === 'escalation');
      expect(mine.map((f) => [f.ts_ns, f.impact_ns, f.values.min_priority]).sort()).toEqual(
        escs.map((e) => [e.start, e.low, e.minp]).sort(),
      );
      const top = maxBy(mine, (f) => f.impact_ns);
      const want = escs.reduce((a, b) => (b.low > a.low ? b : a));
      expect([top.ts_ns, top.impact_ns]).toEqual([want.start, want.low]);
      expect(metricValue(r.metrics, 'kswapd.low_priority_ns')).toBe(Number(escs.reduce((a, b) => a + b.low, 0n)));
    },
  );

  it(
    'the top finding by impact of each detector: the longest shrinker call and stall (the trace.dat within 1 us)',
    { timeout: 240_000 },
    async () => {
      const c = calls();
      const s = stalls();
      const { first } = bounds(report);
      // stalls whose begin came before the trace count from its first event (a lower bound)
      const stallImpacts = s.map((l) =>
        l.startsWith('begin_missing') ? BigInt(l.split(' ')[1]!) - first : BigInt(l.split(' ')[0]!),
      );
      const longestCall = c.reduce((a, b) => (b.dur > a.dur ? b : a)).dur;
      const longestStall = stallImpacts.reduce((a, b) => (b > a ? b : a));
      for (const file of [report, fx('reclaim_kswapd.v7.dat')]) {
        const tol = file.endsWith('.dat') ? US : 0n;
        const r = await analyze(file);
        const topCall = maxBy(
          r.findings.filter((f) => f.detector === 'shrinker_blocking'),
          (f) => f.impact_ns,
        );
        const topStall = maxBy(
          r.findings.filter((f) => f.detector === 'direct_reclaim_stall'),
          (f) => f.impact_ns,
        );
        expect(topCall.impact_ns - longestCall <= tol && longestCall - topCall.impact_ns <= tol, file).toBe(true);
        expect(topStall.impact_ns - longestStall <= tol && longestStall - topStall.impact_ns <= tol, file).toBe(true);
        // ranked: among its detector's findings of the same severity, the worst first
        expect(
          r.findings.filter((f) => f.detector === 'shrinker_blocking' && f.severity === topCall.severity)[0]!.id,
        ).toBe(topCall.id);
      }
    },
  );
});

describe('fsync_xfs and swap_writeback: the top ping-pong and writeback bursts by impact', () => {
  it(
    'ping-pong: bursts of migrations (10 ms apart) with >= 3 bounces; impact = the waits to the next switch-in',
    { timeout: 240_000 },
    async () => {
      const report = fx('fsync_xfs.report.txt');
      const out = awk(
        `${PARSE} { parse() }
       ev == "sched_migrate_task" {
         p = field("pid"); o = field("orig_cpu"); d = field("dest_cpu")
         if (p == "0" || o == d) next
         if (!(p in n) || t - lt[p] > 10000000) chain[p]++
         k = p SUBSEP chain[p]
         b = 0
         for (j = 1; j <= 3; j++) if (n[p] >= j && d == po[p, n[p] - j + 1] && t - pt[p, n[p] - j + 1] <= 10000000) b = 1
         n[p]++; po[p, n[p]] = o; pt[p, n[p]] = t; lt[p] = t
         bounces[k] += b; if (!(k in first)) first[k] = t
         pend[p, ++np[p]] = t; pk[p, np[p]] = k
       }
       ev == "sched_switch" {
         q = nextpid()
         for (j = 1; j <= np[q]; j++) { w = t - pend[q, j]; if (w > 10000000) w = 10000000; wait[pk[q, j]] += w }
         np[q] = 0
       }
       END { for (k in bounces) if (bounces[k] >= 3) { split(k, a, SUBSEP); printf "%s %.0f %d %.0f\\n", a[1], first[k], bounces[k], wait[k] } }`,
        report,
      ).map((l) => {
        const [pid, ts, b, w] = l.split(' ');
        return { pid: Number(pid), ts: BigInt(ts!), bounces: BigInt(b!), wait: BigInt(w!) };
      });
      const r = await analyze(report);
      const mine = r.findings.filter((f) => f.detector === 'migration_pingpong');
      expect(mine.map((f) => [f.values.pid, f.ts_ns, f.values.bounces, f.impact_ns]).sort()).toEqual(
        out.map((b) => [b.pid, b.ts, b.bounces, b.wait]).sort(),
      );
      const top = maxBy(mine, (f) => f.impact_ns);
      expect(top.impact_ns).toBe(out.reduce((a, b) => (b.wait > a ? b.wait : a), 0n));
    },
  );

  it(
    "writeback: bursts of a task's writes at most 100 ms apart; impact = first to last write",
    { timeout: 240_000 },
    async () => {
      const report = fx('swap_writeback.report.txt');
      const out = awk(
        `${PARSE} { parse() }
       ev == "mm_vmscan_write_folio" || ev == "mm_vmscan_writepage" {
         if (!(pid in l) || t - l[pid] > 100000000) { nb++; cur[pid] = nb; f[nb] = t; who[nb] = pid }
         l[pid] = t; last[cur[pid]] = t; pages[cur[pid]]++; total++; if (fw == "") fw = t
       }
       END { for (b = 1; b <= nb; b++) printf "%s %.0f %.0f %d\\n", who[b], f[b], last[b] - f[b], pages[b]; printf "total %d %.0f\\n", total, fw }`,
        report,
      );
      const [, total, fw] = out.at(-1)!.split(' ');
      const bursts = out.slice(0, -1).map((l) => {
        const [pid, ts, span, pages] = l.split(' ');
        return { pid, ts: BigInt(ts!), span: BigInt(span!), pages: BigInt(pages!) };
      });
      const r = await analyze(report);
      const mine = r.findings.filter((f) => f.detector === 'reclaim_writeback');
      expect(mine.map((f) => [f.ts_ns, f.impact_ns, f.values.pages]).sort()).toEqual(
        bursts.map((b) => [b.ts, b.span, b.pages]).sort(),
      );
      expect(maxBy(mine, (f) => f.impact_ns).impact_ns).toBe(bursts.reduce((a, b) => (b.span > a ? b.span : a), 0n));
      const { first } = bounds(report);
      expect(metricValue(r.metrics, 'writeback.pages')).toBe(Number(total));
      expect(metricValue(r.metrics, 'writeback.first_write_ns')).toBe(Number(BigInt(fw!) - first));
      expect(r.overview.lines.find((l) => l.detector === 'reclaim_writeback')!.text).toMatch(
        new RegExp(`^reclaim wrote ${Number(total).toLocaleString('en')} pages \\(anon to swap\\)`),
      );
    },
  );
});

describe('memcg_escalation: a memcg-only trace', () => {
  const dat = fx('memcg_escalation.v7.dat');
  const tmp = mkdtempSync(join(tmpdir(), 'stallscope-golden-memcg-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('has no kswapd activity, and no finding, kind or title says kswapd', { timeout: 240_000 }, async () => {
    const report = traceCmdReport(dat, tmp);
    const [kswapdEvents, memcgBegins] = awk(
      `${PARSE} { parse() } ev ~ /^mm_vmscan_kswapd_/ || (task ~ /^kswapd/ && ev ~ /^mm_/) { k++ } ev == "mm_vmscan_memcg_reclaim_begin" { m++ } END { print k + 0; print m + 0 }`,
      report,
    ).map(Number);
    expect(kswapdEvents).toBe(0);
    expect(memcgBegins).toBeGreaterThan(100);
    const r = await analyze(dat);
    expect(r.findings.length).toBeGreaterThan(0);
    for (const f of r.findings) {
      expect(f.title, f.title).not.toMatch(/kswapd/i);
      expect(['escalation', 'repeated_rampup']).not.toContain(f.kind);
    }
    expect(r.findings.some((f) => f.kind === 'memcg_escalation')).toBe(true);
    for (const l of r.overview.lines.filter((x) => x.status !== 'not_traced'))
      expect(l.text, l.text).not.toMatch(/kswapd(?! episode)/);
  });

  it(
    'rates each memcg reclaim pass by its time at priority <= 6 / <= 3, as awk measures it',
    { timeout: 240_000 },
    async () => {
      // the generated report has microsecond timestamps: ingest it, so that both read the same numbers
      const report = traceCmdReport(dat, tmp);
      const passes = awk(
        `${PARSE}
       function close_p(p,   k, s, h, best, v, low3, low6, lim) {
         if (!open[p]) return
         open[p] = 0
         if (minp[p] > 6) return
         low6 = -1; low3 = -1
         for (k = 1; k <= nst[p]; k++) {
           s = st[p, k]
           best = start[p]
           for (h = s + 1; h <= 12; h++) if ((p, h) in fi && fi[p, h] < sf[p, k]) { v = (la[p, h] < sf[p, k]) ? la[p, h] : fi[p, h]; if (v > best) best = v }
           if (s <= 6 && lastev[p] - best > low6) low6 = lastev[p] - best
           if (s <= 3 && lastev[p] - best > low3) low3 = lastev[p] - best
         }
         if (low6 < 0) low6 = 0
         printf "%.0f %.0f %.0f %d\\n", start[p], low6, (low3 < 0 ? 0 : low3), minp[p]
       }
       { parse() }
       ev == "mm_vmscan_memcg_reclaim_begin" { close_p(pid); open[pid] = 1; start[pid] = t; lastev[pid] = t; minp[pid] = 99; nst[pid] = 0; for (h = 0; h <= 12; h++) { delete fi[pid, h]; delete la[pid, h] } next }
       ev == "mm_vmscan_memcg_reclaim_end" { close_p(pid); next }
       open[pid] && ev ~ /^(mm_vmscan_lru_shrink_(in)?active|mm_shrink_slab_(start|end))$/ {
         lastev[pid] = t
         p = field("priority"); if (p == "" && ev == "mm_shrink_slab_start" && match($0, /priority [0-9]+/)) p = substr($0, RSTART + 9, RLENGTH - 9)
         if (p == "") next
         p += 0
         if (!((pid, p) in fi)) fi[pid, p] = t
         la[pid, p] = t
         if (p < minp[pid]) { minp[pid] = p; nst[pid]++; st[pid, nst[pid]] = p; sf[pid, nst[pid]] = t }
       }
       END { for (q in open) close_p(q) }  # a pass still running when the trace ends`,
        report,
      ).map((l) => {
        const [s, l6, l3, mp] = l.split(' ');
        return { start: BigInt(s!), low6: BigInt(l6!), low3: BigInt(l3!), minp: Number(mp) };
      });
      const sev = (p: (typeof passes)[number]) =>
        p.minp <= 3 && p.low3 >= 100_000_000n ? 'critical' : p.low6 >= 10_000_000n ? 'warn' : 'info';
      const r = await analyze(report);
      const mine = r.findings.filter((f) => f.kind === 'memcg_escalation');
      expect(mine.map((f) => [f.ts_ns, f.impact_ns, f.severity]).sort()).toEqual(
        passes.map((p) => [p.start, p.low6, sev(p)]).sort(),
      );
      // a pass that reaches priority 0 or 1 for a moment is not critical by that alone
      expect(passes.some((p) => p.minp <= 3 && sev(p) !== 'critical')).toBe(true);
    },
  );

  it(
    'lists a pass that stalled and wound down once: the escalation under the stall of the same pass',
    { timeout: 240_000 },
    async () => {
      // memcg reclaim passes per task, begin -> end, from the report (microsecond timestamps: ingest the same text)
      const report = traceCmdReport(dat, tmp);
      const passes = new Map(
        awk(
          `${PARSE} { parse() }
           ev == "mm_vmscan_memcg_reclaim_begin" { b[pid] = t }
           ev == "mm_vmscan_memcg_reclaim_end" && (pid in b) { printf "%s %.0f %.0f\\n", pid, b[pid], t; delete b[pid] }
           END { for (p in b) printf "%s %.0f %.0f\\n", p, b[p], b[p] - 1 }  # still in reclaim at the end: dur -1`,
          report,
        ).map((l) => {
          const [pid, begin, end] = l.split(' ');
          return [`${pid} ${begin}`, BigInt(end!) - BigInt(begin!)];
        }),
      );
      const r = await analyze(report);
      const byId = new Map(r.findings.map((f) => [f.id, f]));
      const mine = r.findings.filter((f) => f.kind === 'memcg_escalation');
      expect(mine.length).toBeGreaterThan(0);
      let nested = 0;
      for (const f of mine) {
        const dur = passes.get(`${f.tid} ${f.ts_ns}`);
        expect(dur, `pass of ${f.title}`).toBeDefined();
        if (dur === -1n) continue; // cut by the trace's end: each detector measures its own part
        // direct_reclaim_stall's warn threshold: 1 ms
        if (dur! >= 1_000_000n) {
          const stall = byId.get(f.parent_id!)!;
          expect(stall, f.title).toBeDefined();
          expect([stall.detector, stall.kind, stall.tid, stall.ts_ns, stall.dur_ns]).toEqual([
            'direct_reclaim_stall',
            'memcg',
            f.tid,
            f.ts_ns,
            dur,
          ]);
          nested++;
        } else expect(f.parent_id).toBeNull();
      }
      expect(nested).toBeGreaterThan(0);
      // the overview's escalation line still counts every escalation
      const line = r.overview.lines.find((l) => l.filter?.kind === 'memcg_escalation')!;
      expect(line.count).toBe(mine.length);
    },
  );

  it('labels no task thread "kswapd" in the app\'s track list', { timeout: 240_000 }, async () => {
    const { TraceLibrary } = await import('../../server/ingest/library.ts');
    const { buildApi } = await import('../../server/api/create_server.ts');
    const lib = await TraceLibrary.open(join(tmp, 'lib'));
    const { app } = await buildApi({ library: lib, appDir: join(tmp, 'no-app') });
    try {
      const id = (await lib.ingest(dat, { name: 'memcg_escalation.v7.dat' })).id;
      const tracks = (await app.inject({ url: `/api/traces/${id}/tracks` })).json() as {
        threadsOfInterest: Array<{ name: string | null; reason: string }>;
      };
      expect(tracks.threadsOfInterest.length).toBeGreaterThan(0);
      for (const t of tracks.threadsOfInterest)
        if (!/^kswapd/.test(t.name ?? '')) expect(t.reason, `${t.name}: ${t.reason}`).not.toMatch(/kswapd/);
      // dd's worst finding is its 428 ms asleep on writeback in memcg reclaim (reclaim_throttled), which
      // outranks its longest memcg reclaim stall (30.6 ms); the thread is labelled by its worst finding
      expect(tracks.threadsOfInterest.map((t) => t.reason)).toContain('finding: reclaim asleep on writeback');
    } finally {
      await app.close();
      await lib.close();
    }
  });
});

describe('ping-pong at wakeup is rated above load / idle balancing', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'stallscope-golden-pingpong-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  /** Per migration of `pid`: whether the pid's latest sched_waking came from the mover, on its CPU, <= 1 ms before. */
  const classify = (report: string, pid: number, from: bigint, to: bigint) =>
    awk(
      `${PARSE} { parse() }
     ev == "sched_waking" { w = field("pid"); wpid[w] = pid; wcpu[w] = cpu; wt[w] = t }
     ev == "sched_migrate_task" && field("pid") == "${pid}" && t >= ${from} && t <= ${to} && field("orig_cpu") != field("dest_cpu") {
       p = field("pid"); print ((p in wt) && wpid[p] == pid && wcpu[p] == cpu && t - wt[p] <= 1000000) ? "wakeup" : "balance", task
     }`,
      report,
    );

  it(
    'jbd2 bounced by its wakers (warn) vs a node build moved by the idle task (info); an unbound kworker bounced by its wakers: info',
    { timeout: 240_000 },
    async () => {
      const fsync = fx('fsync_xfs.report.txt');
      const r0 = await analyze(fsync);
      // the one burst with 10 bounces at wakeup (warn_bounces)
      const kw = r0.findings.find((f) => f.detector === 'migration_pingpong' && Number(f.values.wakeup_bounces) >= 10)!;
      const c0 = classify(fsync, Number(kw.values.pid), kw.ts_ns, kw.ts_ns + kw.dur_ns);
      expect(c0.filter((x) => x.startsWith('wakeup')).length).toBe(Number(kw.values.wakeup_migrations));
      expect(c0.length).toBe(Number(kw.values.migrations));
      // 10 bounces at wakeup were warn before issue 29mp; an unbound kworker's are info now
      expect(kw).toMatchObject({ kind: 'wakeup', severity: 'info', comm: 'kworker/u8:2' });
      expect(kw.values.unbound_kworker).toBe(true);

      const timers = traceCmdReport(fx('fsync_timers.v7.dat'), tmp);
      const r1 = await analyze(timers);
      const wake = r1.findings.find((f) => f.detector === 'migration_pingpong')!; // ranked: the worst
      const c1 = classify(timers, Number(wake.values.pid), wake.ts_ns, wake.ts_ns + wake.dur_ns);
      expect(c1.filter((x) => x.startsWith('wakeup')).length).toBe(Number(wake.values.wakeup_migrations));
      expect(c1.length).toBe(Number(wake.values.migrations));
      expect(wake).toMatchObject({ kind: 'wakeup', severity: 'warn', comm: 'jbd2/loop0-8' });

      const memcg = traceCmdReport(fx('memcg_escalation.v7.dat'), tmp);
      const r2 = await analyze(memcg);
      const bal = r2.findings.find((f) => f.detector === 'migration_pingpong' && f.kind === 'balance')!;
      const c2 = classify(memcg, Number(bal.values.pid), bal.ts_ns, bal.ts_ns + bal.dur_ns);
      expect(c2.filter((x) => x.startsWith('balance')).length).toBe(Number(bal.values.balance_migrations));
      // moved most by the idle task (idle balancing)
      expect(c2.filter((x) => x.endsWith('<idle>')).length * 2).toBeGreaterThan(c2.length);
      expect(bal.severity).toBe('info');
      expect(SEV[wake.severity]!).toBeLessThan(SEV[bal.severity]!);
    },
  );

  it(
    'a parallel C build: its compilers are only balanced (no finding), while a wakeup ping-pong in the same trace is one',
    { timeout: 240_000 },
    async () => {
      const report = traceCmdReport(fx('build_balance.v7.dat'), tmp);
      const cc1 = awk(
        `${PARSE} { parse() }
       ev == "sched_waking" { w = field("pid"); wpid[w] = pid; wcpu[w] = cpu; wt[w] = t }
       ev == "sched_migrate_task" && field("comm") == "cc1" && field("orig_cpu") != field("dest_cpu") {
         p = field("pid"); n++; if ((p in wt) && wpid[p] == pid && wcpu[p] == cpu && t - wt[p] <= 1000000) w1++
       }
       END { print n + 0, w1 + 0 }`,
        report,
      )[0]!
        .split(' ')
        .map(Number);
      expect(cc1[0]).toBeGreaterThan(20); // the build's compilers were moved...
      expect(cc1[1]).toBe(0); // ... never at wakeup
      const r = await analyze(report);
      expect(r.findings.filter((f) => f.comm === 'cc1')).toEqual([]);
      const w = r.findings.filter((f) => f.detector === 'migration_pingpong' && f.kind === 'wakeup');
      expect(w.length).toBeGreaterThan(0);
      expect(SEV[w[0]!.severity]!).toBeLessThanOrEqual(SEV.warn!);
    },
  );
  /**
   * Ping-pong bursts of a report, counted without stallscope by fixtures/recording/migration_pingpong_bursts.awk
   * as the detector's header defines them (its comment gives the definition): one row per burst with >= 3
   * bounces: pid, first ts, comm, bounces, wakeup bounces, moves, moves followed by a switch-in, waiting in
   * all (ns), and the severity the script's own copy of the rule gives, checked below against severityOf.
   */
  const bursts = (report: string) => {
    const [header, ...rows] = awkScript(BURSTS_AWK, report).map((l) => l.split('\t'));
    const col = (name: string) => header!.indexOf(name);
    return rows.map((r) => ({
      pid: Number(r[col('pid')]),
      ts: BigInt(r[col('first_ts')]!),
      comm: r[col('comm')]!,
      bounces: Number(r[col('bounces')]),
      wakeupBounces: Number(r[col('wakeup_bounces')]),
      moves: Number(r[col('moves')]),
      waited: Number(r[col('waited')]),
      wait: Number(r[col('wait_ns')]),
      scriptSeverity: r[col('severity')]!,
    }));
  };
  type Burst = ReturnType<typeof bursts>[number];
  const MS = 1e6;
  const meanWait = (b: Burst) => (b.waited > 0 ? Math.round(b.wait / b.waited) : null);
  /**
   * The header's rule, on awk's counts (defaults: warn 10 bounces with 100 us per move or 10 ms in all;
   * critical 50 bounces, 1 ms per move and 100 ms in all). `floor: false`: warn at any wait, as before issue 29pf.
   */
  const severityOf = (b: Burst, { floor = true } = {}) => {
    if (/^kworker\/u\d+:\d+$/.test(b.comm)) return 'info'; // unbound: any CPU is its own
    if (2 * b.wakeupBounces < b.bounces) return b.bounces >= 200 ? 'warn' : 'info'; // load / idle balancing
    const mean = meanWait(b);
    if (b.bounces >= 50 && mean !== null && mean >= 1 * MS && b.wait >= 100 * MS) return 'critical';
    const costly = !floor || (mean !== null && mean >= 0.1 * MS) || b.wait >= 10 * MS;
    return b.bounces >= 10 && costly ? 'warn' : 'info';
  };
  const noFloor = (b: Burst) => severityOf(b, { floor: false });
  /** The rule before issue 29mp: 50 bounces and 100 ms in all made a wakeup burst critical. */
  const oldSeverityOf = (b: Burst) =>
    2 * b.wakeupBounces < b.bounces
      ? b.bounces >= 200
        ? 'warn'
        : 'info'
      : b.bounces >= 50 && b.wait >= 100 * MS
        ? 'critical'
        : b.bounces >= 10
          ? 'warn'
          : 'info';

  it(
    'fsync loops and a timer task on ext4: long bursts of short waits are warn, unbound kworkers info, as awk counts them',
    { timeout: 300_000 },
    async () => {
      const report = traceCmdReport(fx('fsync_timers.v7.dat'), tmp);
      const all = bursts(report);
      const r = await analyze(report);
      const mine = r.findings.filter((f) => f.detector === 'migration_pingpong');
      // every burst, its bounces and its severity as the rule gives them on awk's counts
      expect(mine.map((f) => [f.values.pid, f.ts_ns, Number(f.values.bounces), f.severity]).sort()).toEqual(
        all.map((b) => [b.pid, b.ts, b.bounces, severityOf(b)]).sort(),
      );
      const count = (sev: (b: Burst) => string) =>
        all.reduce<Record<string, number>>((a, b) => ((a[sev(b)] = (a[sev(b)] ?? 0) + 1), a), {});
      expect(count(severityOf)).toEqual({ warn: 19, info: 33 });
      expect(all.map((b) => b.scriptSeverity)).toEqual(all.map((b) => severityOf(b)));
      expect(count(noFloor)).toEqual({ warn: 20, info: 32 });
      // the one the warn wait floor demotes: 19 bounces at 75 us per move, 1.5 ms in all
      const demoted = all.filter((b) => noFloor(b) === 'warn' && severityOf(b) === 'info');
      expect(
        demoted.map((b) => [b.comm, b.bounces, Math.round(meanWait(b)! / 1000), Math.round(b.wait / 1e5) / 10]),
      ).toEqual([['smallfiles', 19, 75, 1.5]]);
      // the old rule made jbd2's 0.6 s burst critical: 2557 bounces, 107 ms of waiting in all,
      // but 42 us per move (18% of the burst)
      const jbd2 = maxBy(
        mine.filter((f) => f.comm === 'jbd2/loop0-8'),
        (f) => f.impact_ns,
      );
      const j = all.find((b) => b.pid === jbd2.values.pid && b.ts === jbd2.ts_ns)!;
      expect([j.bounces, Math.round(j.wait / MS), Math.round(j.wait / j.waited / 1000)]).toEqual([2557, 107, 42]);
      expect([oldSeverityOf(j), severityOf(j), jbd2.severity]).toEqual(['critical', 'warn', 'warn']);
      // ... warn by the total clause alone: under 100 us per move, over 10 ms in all
      expect([meanWait(j)! < 0.1 * MS, j.wait >= 10 * MS]).toEqual([true, true]);
      expect(Number(jbd2.values.mean_wait_ns)).toBe(Math.round(j.wait / j.waited));
      // the unbound kworkers' bursts: hundreds of bounces at wakeup, warn by the old rule, info now
      const kw = all.filter((b) => /^kworker\/u/.test(b.comm) && b.bounces >= 50);
      expect(kw.map(oldSeverityOf)).toEqual(kw.map(() => 'warn'));
      expect(kw.length).toBeGreaterThan(0);
      for (const f of mine.filter((f) => /^kworker\/u/.test(f.comm ?? ''))) {
        expect(f.severity).toBe('info');
        expect(f.title).toMatch(/; an unbound kworker, free to run on any CPU$/);
      }
    },
  );

  it(
    'dbench on 2 CPUs (corpus sched_wq, many_systems): warn needs 100 us per move or 10 ms in all, as awk counts them; the worst ranked first',
    { timeout: 300_000 },
    async () => {
      // [file, warn and info bursts by the rule, warn bursts without the warn wait floor]: awk's counts
      const cases: [string, Record<string, number>, number][] = [
        ['sched_wq.v7.dat', { warn: 5, info: 113 }, 21],
        ['many_systems.v7.dat', { warn: 10, info: 87 }, 30],
      ];
      for (const [name, counts, warnsWithoutFloor] of cases) {
        const report = traceCmdReport(fx(`corpus/${name}`), tmp);
        const all = bursts(report);
        const r = await analyze(report);
        const mine = r.findings.filter((f) => f.detector === 'migration_pingpong');
        expect(mine.map((f) => [f.values.pid, f.ts_ns, Number(f.values.bounces), f.severity]).sort(), name).toEqual(
          all.map((b) => [b.pid, b.ts, b.bounces, severityOf(b)]).sort(),
        );
        const count = all.reduce<Record<string, number>>(
          (a, b) => ((a[severityOf(b)] = (a[severityOf(b)] ?? 0) + 1), a),
          {},
        );
        expect(count, name).toEqual(counts);
        expect(
          all.map((b) => b.scriptSeverity),
          name,
        ).toEqual(all.map((b) => severityOf(b)));
        expect(all.filter((b) => noFloor(b) === 'warn').length, name).toBe(warnsWithoutFloor);
        // the demoted: dbench's processes run within 100 us of their moves, a few ms in all
        for (const b of all.filter((b) => noFloor(b) === 'warn' && severityOf(b) === 'info')) {
          expect([meanWait(b)! < 0.1 * MS, b.wait < 10 * MS], name).toEqual([true, true]);
        }
        // ranked: the first of the detector's findings is the warn burst that waited longest in all
        const warns = all.filter((b) => severityOf(b) === 'warn');
        const worst = warns.reduce((a, b) => (b.wait > a.wait ? b : a));
        expect([mine[0]!.severity, mine[0]!.values.pid, mine[0]!.ts_ns], name).toEqual(['warn', worst.pid, worst.ts]);
        expect(Number(mine[0]!.impact_ns), name).toBe(worst.wait);
      }
    },
  );
});

describe('corpus reclaim.v7.dat: a kswapd that runs balance_pgdat round after round without sleeping', () => {
  it('the overview counts real wake-ups apart from rounds: mm_vmscan_kswapd_wake fires before every round', async () => {
    const dat = fx('corpus/reclaim.v7.dat');
    const report = traceCmdReport(dat, dataDir);
    // per kswapd thread: wake events, and wakes with no kswapd_sleep of that thread since its previous wake
    const rows = awk(
      `${PARSE} { parse() }
       ev == "mm_vmscan_kswapd_wake" { n[task]++; if (awake[task]) b[task]++; awake[task] = 1 }
       ev == "mm_vmscan_kswapd_sleep" { awake[task] = 0 }
       END { for (k in n) print k, n[k], b[k] + 0 }`,
      report,
    ).map((l) => l.split(' '));
    expect(rows).toHaveLength(1);
    const [task, rounds, sleepless] = [rows[0]![0]!, Number(rows[0]![1]), Number(rows[0]![2])];
    expect(task).toBe('kswapd0');
    // the recording's kswapd met the watermark only now and then
    expect(sleepless).toBeGreaterThan(rounds / 2);
    const r = await analyze(dat);
    expect(metricValue(r.metrics, 'kswapd.episodes', 'kswapd0')).toBe(rounds);
    expect(metricValue(r.metrics, 'kswapd.rounds_without_sleep', 'kswapd0')).toBe(sleepless);
    const line = r.overview.lines.find((l) => l.detector === 'kswapd_escalation')!;
    expect(
      line.text.startsWith(`kswapd0 woke ${rounds - sleepless} times and ran ${rounds} balance_pgdat rounds;`),
    ).toBe(true);
  }, 180_000);
});
