/**
 * The story of a trace: per detector, the few lines a kernel developer would
 * write in a mail about it, each pointing at the findings it summarises.
 *
 *   kswapd0 woke 14 times; reached priority 1 (12 -> 1 in 411.0 ms), 1.30 s at priority 6 or lower
 *   super_cache_scan: 87,205 calls, 12 over 100 ms, worst 452.6 ms in kswapd0
 *   direct reclaim: 3,496 stalls in 24 tasks, 94/s, p50/p95/p99/max 0.1/2.3/12.0/253.0 ms, worst memhog[4242] 253.0 ms
 *   reclaim wrote 424,464 pages (anon to swap) from 19.1 s, in 2.10 s
 *   kworker/u8:0 migrated 609 times between CPUs 0 and 1, 362 bounces (340 at wakeup)
 *   shrinker_blocking: not traced: enable vmscan:mm_shrink_slab_start/end
 *
 * Every number comes from the metrics (server/findings/metrics.ts); the
 * findings only say which one a line links to and its task. The CLI prints
 * these lines first, the JSON has them as `overview`, the app shows them
 * when a trace opens (this module is the one place they are worded).
 *
 * Not to be confused with server/api/overview.ts, the timeline's per-track
 * summary at a coarse resolution.
 */
import { type Finding, type Severity } from './finding.ts';
import { metricByKey, metricValue, type Metric } from './metrics.ts';
import { DETECTOR_LABELS, notTracedLabel } from '../../shared/contract/labels.ts';
import { listedInOwnDetector, type OverviewFilter, type OverviewLine } from '../../shared/contract/findings.ts';

export type { OverviewFilter, OverviewLine } from '../../shared/contract/findings.ts';
export interface Overview {
  /** Ordered: detectors with the worst findings first, then quiet ones, then the not traced. */
  lines: OverviewLine[];
}

interface DetectorInfoForOverview {
  id: string;
  title: string;
  status: 'ok' | 'not_traced';
  hint: string;
  /** DetectorRun.enabled_listed: "not traced" when true, "not seen" (text) when not. */
  enabled_listed: boolean;
  params: Record<string, string>;
  /** `@rank` of its header (detector_registry.ts). */
  rank: 'impact' | 'loss';
}

interface Input {
  findings: readonly Finding[];
  metrics: readonly Metric[];
  detectors: readonly DetectorInfoForOverview[];
}

const SEV_ORDER: Record<Severity, number> = { critical: 0, warn: 1, info: 2 };

/** '850 ns', '12.3 us', '412.5 ms', '2.35 s' (as format_report and the SQL macro ss_fmt_dur). */
export function fmtDur(ns: number): string {
  const a = Math.abs(ns);
  if (a < 1e3) return `${Math.round(ns)} ns`;
  if (a < 1e6) return `${(ns / 1e3).toFixed(1)} us`;
  if (a < 1e9) return `${(ns / 1e6).toFixed(1)} ms`;
  return `${(ns / 1e9).toFixed(2)} s`;
}

/**
 * toLocaleString('en')'s formatter, made when the module loads: the first
 * toLocaleString of a process loads ICU's number formatting (10-30 ms), which
 * otherwise fell in the first upload's findings (buildOverview).
 */
const THOUSANDS = new Intl.NumberFormat('en');

/** 87,205 */
export function fmtInt(n: number): string {
  return THOUSANDS.format(Math.round(n));
}

function fmtRate(n: number): string {
  return n >= 10 ? fmtInt(n) : n.toFixed(1);
}

/** ms for p50/p95/p99/max lists: one decimal, three under 0.1 ms. */
function ms(ns: number): string {
  return ns < 1e5 ? (ns / 1e6).toFixed(3) : (ns / 1e6).toFixed(1);
}

/** Bytes as MB (10^6), as vmstat-minded readers quote throughput: '412.3 MB'. */
function fmtMB(n: number): string {
  return `${(n / 1e6).toFixed(1)} MB`;
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${fmtInt(n)} ${n === 1 ? one : many}`;
}

/** A finding's length for a line: 'at least 12.7 ms (...)' when it is a bound, not a measurement. */
function worstOf(f: Finding): string {
  const d = fmtDur(Number(f.impact_ns));
  if (f.values.begin_missing === true) return `at least ${d} (it began before the trace)`;
  if (f.values.open === true && f.values.end_lost !== true)
    return `at least ${d} (still running at the end of the trace)`;
  return d;
}

/** A task as titles name it: kswapd by name, others comm[tid]. */
function taskOf(f: Finding | undefined): string {
  if (!f) return '?';
  if (f.comm && /^kswapd\d/.test(f.comm)) return f.comm;
  return `${f.comm ?? '?'}${f.tid !== null ? `[${f.tid}]` : ''}`;
}

function matches(f: Finding, flt: OverviewFilter): boolean {
  if (f.detector !== flt.detector) return false;
  if (flt.kind !== undefined && f.kind !== flt.kind) return false;
  if (flt.comm !== undefined && f.comm !== flt.comm) return false;
  if (flt.shrinker !== undefined && f.values.shrinker !== flt.shrinker) return false;
  if (flt.device !== undefined && f.values.device !== flt.device) return false;
  return true;
}

/** Durations given as parameter text ('10000000') in ms for the text: '10 ms'. */
function paramMs(p: Record<string, string>, name: string, fallback: number): string {
  const v = Number(p[name] ?? fallback);
  return `${Number.isFinite(v) ? +(v / 1e6).toFixed(3) : fallback / 1e6} ms`;
}

class Lines {
  readonly out: OverviewLine[] = [];
  private readonly byId: ReadonlyMap<number, Finding>;
  constructor(
    private readonly findings: readonly Finding[],
    private readonly detector: string,
  ) {
    this.byId = new Map(findings.map((f) => [f.id, f]));
  }

  /** A row of its detector's list: an escalation under another detector's stall still counts (same_pass.ts). */
  private listed(f: Finding): boolean {
    return listedInOwnDetector(f, (id) => this.byId.get(id));
  }

  /** Adds a line; with a filter, links it to the top-ranked matching finding (findings come ranked). */
  add(text: string, metrics: string[], filter: OverviewFilter | null): void {
    const hits = filter ? this.findings.filter((f) => matches(f, filter) && this.listed(f)) : [];
    const top = hits[0];
    this.out.push({
      detector: this.detector,
      status: hits.length ? 'findings' : 'quiet',
      severity: top ? top.severity : null,
      text,
      finding_id: top ? top.id : null,
      filter: hits.length ? filter : null,
      count: hits.length,
      metrics,
    });
  }

  top(filter: OverviewFilter): Finding | undefined {
    return this.findings.find((f) => matches(f, filter) && this.listed(f));
  }

  all(filter: OverviewFilter): Finding[] {
    return this.findings.filter((f) => matches(f, filter));
  }

  count(filter: OverviewFilter): number {
    return this.findings.filter((f) => matches(f, filter) && this.listed(f)).length;
  }
}

type Writer = (l: Lines, m: readonly Metric[], params: Record<string, string>) => void;

const WRITERS: Record<string, Writer> = {
  kswapd_escalation(l, m, params) {
    const warnP = params.warn_priority ?? '6';
    for (const ep of metricByKey(m, 'kswapd.episodes')) {
      const k = ep.key!;
      const v = (name: string) => metricValue(m, `kswapd.${name}`, k);
      const minP = v('min_priority');
      // mm_vmscan_kswapd_wake fires before every balance_pgdat() round, slept or not: a kswapd
      // that cannot balance the node runs round after round with one real wake-up
      const rounds = ep.value;
      const sleepless = v('rounds_without_sleep') ?? 0;
      const parts = [
        sleepless > 0
          ? `${k} woke ${plural(rounds - sleepless, 'time')} and ran ${fmtInt(rounds)} balance_pgdat rounds`
          : `${k} woke ${plural(rounds, 'time')}`,
      ];
      if (minP !== null) {
        const start = v('worst_start_priority');
        const ttm = v('worst_time_to_min_ns');
        parts.push(
          `reached priority ${minP}${start !== null && ttm !== null ? ` (${start} -> ${minP} in ${fmtDur(ttm)})` : ''}`,
        );
      }
      const low = v('low_priority_ns') ?? 0;
      if (low > 0) parts.push(`${fmtDur(low)} at priority ${warnP} or lower`);
      const eff = v('efficiency');
      const scanned = v('pages_scanned');
      if (eff !== null && scanned)
        parts.push(`reclaimed ${Math.round(eff * 100)}% of ${fmtInt(scanned)} pages scanned`);
      const rampups = l.count({ detector: 'kswapd_escalation', kind: 'repeated_rampup', comm: k });
      if (rampups > 0) parts.push(`wound up again and again (${plural(rampups, 'repeated ramp-up')})`);
      l.add(
        parts.join('; '),
        [
          'kswapd.episodes',
          'kswapd.rounds_without_sleep',
          'kswapd.min_priority',
          'kswapd.worst_start_priority',
          'kswapd.worst_time_to_min_ns',
          'kswapd.low_priority_ns',
          'kswapd.efficiency',
          'kswapd.pages_scanned',
        ].filter((id) => metricValue(m, id, k) !== null),
        rampups
          ? { detector: 'kswapd_escalation', kind: 'repeated_rampup', comm: k }
          : { detector: 'kswapd_escalation', kind: 'escalation', comm: k },
      );
    }
    for (const family of ['direct', 'memcg', 'node']) {
      const base = `reclaim_priority.${family}`;
      const esc = metricValue(m, `${base}.passes_escalated`);
      const passes = metricValue(m, `${base}.passes`);
      if (!esc || passes === null) continue;
      const minP = metricValue(m, `${base}.min_priority`);
      const low = metricValue(m, `${base}.low_priority_ns`) ?? 0;
      const kind = `${family}_escalation`;
      const top = l.top({ detector: 'kswapd_escalation', kind });
      l.add(
        `${family} reclaim wound down to priority ${warnP} or lower in ${fmtInt(esc)} of ${plural(passes, 'pass', 'passes')} (lowest ${minP}), ` +
          `${fmtDur(low)} there in all${top ? `; worst ${taskOf(top)} ${fmtDur(Number(top.impact_ns))}` : ''}`,
        [`${base}.passes_escalated`, `${base}.passes`, `${base}.min_priority`, `${base}.low_priority_ns`],
        { detector: 'kswapd_escalation', kind },
      );
    }
    if (l.out.length === 0) {
      // nothing wound down far: say how far reclaim went, where it ran at all
      const seen = ['direct', 'memcg', 'node']
        .map((f) => ({
          f,
          passes: metricValue(m, `reclaim_priority.${f}.passes`),
          minP: metricValue(m, `reclaim_priority.${f}.min_priority`),
        }))
        .filter((x) => x.passes);
      l.add(
        seen.length
          ? `reclaim never wound down to priority ${warnP}: ${seen.map((x) => `${x.f} reclaim lowest ${x.minP ?? '?'} in ${plural(x.passes!, 'pass', 'passes')}`).join(', ')}; no kswapd episode`
          : 'no kswapd episode and no reclaim pass with a priority in the trace',
        seen.flatMap((x) => [`reclaim_priority.${x.f}.passes`, `reclaim_priority.${x.f}.min_priority`]),
        null,
      );
    }
  },

  shrinker_blocking(l, m, params) {
    const warn = paramMs(params, 'warn_ns', 10e6);
    const crit = paramMs(params, 'critical_ns', 100e6);
    const total = metricValue(m, 'shrinker.calls') ?? 0;
    const slow = metricByKey(m, 'shrinker.call_max_ns');
    const over = (k: string) => metricValue(m, 'shrinker.calls_over_warn', k) ?? 0;
    const shown = slow.filter((x) => over(x.key!) > 0).slice(0, 3);
    for (const s of shown) {
      const k = s.key!;
      const calls = metricValue(m, 'shrinker.calls', k) ?? 0;
      const oc = metricValue(m, 'shrinker.calls_over_critical', k) ?? 0;
      const ow = over(k);
      // the task of the longest completed call (the metric's), not of a call whose end was lost
      const worst = l
        .all({ detector: 'shrinker_blocking', shrinker: k, kind: 'call' })
        .find((f) => Number(f.dur_ns) === s.value && f.values.open !== true && f.values.begin_missing !== true);
      l.add(
        `${k}: ${plural(calls, 'call')}, ${oc > 0 ? `${fmtInt(oc)} over ${crit}` : `${fmtInt(ow)} over ${warn}`}, worst ${fmtDur(s.value)}` +
          (worst ? ` in ${taskOf(worst)}` : ''),
        [
          'shrinker.calls',
          oc > 0 ? 'shrinker.calls_over_critical' : 'shrinker.calls_over_warn',
          'shrinker.call_max_ns',
        ],
        { detector: 'shrinker_blocking', shrinker: k },
      );
    }
    const more = slow.filter((x) => over(x.key!) > 0).length - shown.length;
    if (more > 0)
      l.add(`${plural(more, 'more shrinker')} had calls over ${warn}`, ['shrinker.calls_over_warn'], {
        detector: 'shrinker_blocking',
      });
    // calls cut by the trace's edges: measured only in part, and not in the metrics
    const cut = l
      .all({ detector: 'shrinker_blocking' })
      .filter(
        (f) =>
          f.parent_id === null &&
          f.severity !== 'info' &&
          (f.values.begin_missing === true || (f.values.open === true && f.values.end_lost !== true)),
      )
      .slice(0, 2);
    for (const f of cut) {
      const sym = String(f.values.shrinker ?? '?');
      l.add(
        `${sym}: a call by ${taskOf(f)} ${f.values.begin_missing === true ? 'began before the trace, ' : 'was still running at its end, '}at least ${fmtDur(Number(f.impact_ns))}`,
        [],
        {
          detector: 'shrinker_blocking',
          shrinker: sym,
        },
      );
    }
    if (shown.length === 0) {
      const mx = metricValue(m, 'shrinker.call_max_ns');
      l.add(
        total > 0
          ? `shrinkers: ${plural(total, 'completed call')}, none over ${warn} (longest ${fmtDur(mx ?? 0)})`
          : 'shrinkers: no completed call in the trace',
        ['shrinker.calls', 'shrinker.call_max_ns'],
        null,
      );
    }
  },

  direct_reclaim_stall(l, m, params) {
    const warn = paramMs(params, 'warn_ns', 1e6);
    let any = false;
    for (const family of ['direct', 'memcg', 'node']) {
      const base = `reclaim_stall.${family}`;
      const stalls = metricValue(m, `${base}.stalls`);
      if (!stalls) continue;
      any = true;
      const v = (n: string) => metricValue(m, `${base}.${n}`) ?? 0;
      const top = l.top({ detector: 'direct_reclaim_stall', kind: family });
      l.add(
        `${family} reclaim: ${plural(stalls, 'stall')} in ${plural(v('tasks'), 'task')}, ${fmtRate(v('stalls_per_s'))}/s, ` +
          `p50/p95/p99/max ${ms(v('stall_p50_ns'))}/${ms(v('stall_p95_ns'))}/${ms(v('stall_p99_ns'))}/${ms(v('stall_max_ns'))} ms` +
          (top ? `, worst ${taskOf(top)} ${worstOf(top)}` : `, none over ${warn}`),
        ['stalls', 'tasks', 'stalls_per_s', 'stall_p50_ns', 'stall_p95_ns', 'stall_p99_ns', 'stall_max_ns'].map(
          (n) => `${base}.${n}`,
        ),
        { detector: 'direct_reclaim_stall', kind: family },
      );
    }
    if (!any)
      l.add('direct / memcg reclaim: no completed stall in the trace', [], { detector: 'direct_reclaim_stall' });
  },

  reclaim_writeback(l, m) {
    const pages = metricValue(m, 'writeback.pages');
    // reclaim that met dirty pages woke the flushers instead of writing them (memcg and direct
    // reclaim never write file pages): say how often, where writeback_start was traced
    const starts = metricValue(m, 'writeback.flusher_vmscan_starts');
    if (!pages) {
      if (starts)
        l.add(
          `reclaim wrote no pages itself; it started the flusher ${plural(starts, 'time')} (writeback_start reason=vmscan)`,
          ['writeback.flusher_vmscan_starts'],
          null,
        );
      else l.add('reclaim wrote no pages', [], null);
      return;
    }
    const file = metricValue(m, 'writeback.file_pages') ?? 0;
    const anon = metricValue(m, 'writeback.anon_pages') ?? 0;
    const sync = metricValue(m, 'writeback.sync_pages') ?? 0;
    const from = metricValue(m, 'writeback.first_write_ns') ?? 0;
    const span = metricValue(m, 'writeback.span_ns') ?? 0;
    const what =
      file > 0 && anon > 0
        ? `${fmtInt(file)} file (flushers fell behind) + ${fmtInt(anon)} anon to swap`
        : file > 0
          ? 'file pages: the flushers fell behind'
          : 'anon to swap';
    const by = metricByKey(m, 'writeback.pages')
      .slice(0, 2)
      .map((x) => x.key)
      .join(', ');
    l.add(
      `reclaim wrote ${fmtInt(pages)} pages (${what}) starting ${fmtDur(from)} into the trace, over ${fmtDur(span)}${sync ? `, ${fmtInt(sync)} synchronously` : ''}${by ? `, by ${by}` : ''}`,
      [
        'writeback.pages',
        'writeback.file_pages',
        'writeback.anon_pages',
        'writeback.first_write_ns',
        'writeback.span_ns',
      ],
      { detector: 'reclaim_writeback' },
    );
  },

  migration_pingpong(l, m) {
    const total = metricValue(m, 'migration.migrations');
    if (!total) {
      l.add('no task migrated between CPUs', [], null);
      return;
    }
    const tasks = metricByKey(m, 'migration.bounces').filter((x) => x.value > 0);
    // tasks with ping-pong findings, the one with the worst finding first (findings come ranked)
    const rankOf = (k: string) => l.top({ detector: 'migration_pingpong', comm: k })?.rank ?? Infinity;
    const withFindings = tasks
      .filter((x) => rankOf(x.key!) !== Infinity)
      .sort((a, b) => rankOf(a.key!) - rankOf(b.key!));
    for (const t of withFindings.slice(0, 3)) {
      const k = t.key!;
      const mig = metricValue(m, 'migration.migrations', k) ?? 0;
      const wake = metricValue(m, 'migration.wakeup_migrations', k) ?? 0;
      const top = l.top({ detector: 'migration_pingpong', comm: k });
      const cpus = Array.isArray(top?.values.cpus) ? (top!.values.cpus as unknown[]).map(String) : null;
      const between =
        cpus && cpus.length >= 2 ? ` between CPUs ${cpus.slice(0, -1).join(', ')} and ${cpus.at(-1)}` : '';
      l.add(
        `${k} migrated ${plural(mig, 'time')}${between}, ${plural(t.value, 'bounce')} (${fmtInt(wake)} of the migrations at wakeup, ${fmtInt(mig - wake)} by load balancing)`,
        ['migration.migrations', 'migration.bounces', 'migration.wakeup_migrations'],
        { detector: 'migration_pingpong', comm: k },
      );
    }
    if (withFindings.length === 0) {
      const perS = metricValue(m, 'migration.migrations_per_s');
      const bounces = metricValue(m, 'migration.bounces') ?? 0;
      const most = metricByKey(m, 'migration.migrations')[0];
      l.add(
        `${plural(total, 'migration')}${perS !== null ? ` (${fmtRate(perS)}/s)` : ''}, ${plural(bounces, 'bounce')}, no ping-pong burst` +
          (most ? ` (most: ${most.key} ${fmtInt(most.value)})` : ''),
        ['migration.migrations', 'migration.migrations_per_s', 'migration.bounces'],
        { detector: 'migration_pingpong' },
      );
    }
  },

  reclaim_throttled(l, m) {
    const sleeps = metricValue(m, 'throttle.sleeps');
    if (!sleeps) {
      l.add('reclaim never throttled a task', [], null);
      return;
    }
    const rankOf = (k: string) => l.top({ detector: 'reclaim_throttled', comm: k })?.rank ?? Infinity;
    const tasks = metricByKey(m, 'throttle.slept_ns')
      .filter((x) => rankOf(x.key!) !== Infinity)
      .sort((a, b) => rankOf(a.key!) - rankOf(b.key!));
    const reasons = metricByKey(m, 'throttle.sleeps')
      .filter((x) => x.scope === 'reason')
      .map((x) => `${x.key} ${fmtInt(x.value)}`)
      .join(', ');
    for (const t of tasks.slice(0, 3)) {
      const k = t.key!;
      const n = metricValue(m, 'throttle.sleeps', k) ?? 0;
      const mx = metricValue(m, 'throttle.max_sleep_ns', k) ?? 0;
      const tmo = metricValue(m, 'throttle.timed_out', k) ?? 0;
      const top = l.top({ detector: 'reclaim_throttled', comm: k });
      const ctx =
        top && typeof top.values.context === 'string' && top.values.context !== 'other'
          ? ` in ${top.values.context}`
          : '';
      l.add(
        `${k} slept ${fmtDur(t.value)} throttled${ctx || ' in reclaim'} (${plural(n, 'sleep')}, longest ${fmtDur(mx)}${tmo ? `, ${fmtInt(tmo)} ran the full timeout` : ''})`,
        ['throttle.slept_ns', 'throttle.sleeps', 'throttle.max_sleep_ns', 'throttle.timed_out'],
        { detector: 'reclaim_throttled', comm: k },
      );
    }
    if (tasks.length === 0) {
      l.add(
        `reclaim throttled ${plural(metricValue(m, 'throttle.tasks') ?? 0, 'task')} ${plural(sleeps, 'time')} (${reasons}), ${fmtDur(metricValue(m, 'throttle.slept_ns') ?? 0)} asleep in all`,
        ['throttle.sleeps', 'throttle.tasks', 'throttle.slept_ns'],
        { detector: 'reclaim_throttled' },
      );
    }
  },

  dirty_throttled(l, m) {
    const calls = metricValue(m, 'dirty.calls');
    const maxDirty = metricValue(m, 'dirty.max_dirty_pages');
    const thresh = metricValue(m, 'dirty.dirty_thresh_pages');
    const runs = metricValue(m, 'dirty.flusher_runs');
    const state = [
      maxDirty !== null
        ? `dirty pages peaked at ${fmtInt(maxDirty)}${thresh !== null ? ` (threshold ${fmtInt(thresh)})` : ''}`
        : null,
      runs ? `the flusher started ${plural(runs, 'time')}` : null,
    ]
      .filter(Boolean)
      .join(', ');
    if (!calls) {
      l.add(
        `no task was dirty-throttled${state ? `; ${state}` : ''}`,
        ['dirty.max_dirty_pages', 'dirty.dirty_thresh_pages', 'dirty.flusher_runs'].filter(
          (id) => metricValue(m, id) !== null,
        ),
        null,
      );
      return;
    }
    const rankOf = (k: string) => l.top({ detector: 'dirty_throttled', comm: k })?.rank ?? Infinity;
    const tasks = metricByKey(m, 'dirty.paused_ns')
      .filter((x) => x.value > 0)
      .sort((a, b) => rankOf(a.key!) - rankOf(b.key!) || b.value - a.value);
    for (const t of tasks.slice(0, 3)) {
      const k = t.key!;
      const n = metricValue(m, 'dirty.pauses', k) ?? 0;
      const mx = metricValue(m, 'dirty.max_pause_ns', k) ?? 0;
      l.add(
        `${k} paused ${fmtDur(t.value)} in balance_dirty_pages (${plural(n, 'pause')}, longest ${fmtDur(mx)})${state ? `; ${state}` : ''}`,
        [
          'dirty.paused_ns',
          'dirty.pauses',
          'dirty.max_pause_ns',
          'dirty.max_dirty_pages',
          'dirty.dirty_thresh_pages',
          'dirty.flusher_runs',
        ].filter((id) => metricValue(m, id) !== null),
        { detector: 'dirty_throttled', comm: k },
      );
    }
    if (tasks.length === 0)
      l.add(
        `balance_dirty_pages ran ${plural(calls, 'time')} and never paused a task${state ? `; ${state}` : ''}`,
        ['dirty.calls'],
        { detector: 'dirty_throttled' },
      );
  },

  io_latency(l, m, params) {
    const devices = metricByKey(m, 'io.requests');
    if (devices.length === 0) {
      l.add('no block request completed in the trace', [], null);
      return;
    }
    const rankOf = (k: string) => l.top({ detector: 'io_latency', device: k })?.rank ?? Infinity;
    devices.sort((a, b) => rankOf(a.key!) - rankOf(b.key!) || b.value - a.value);
    for (const d of devices.slice(0, 4)) {
      const k = d.key!;
      const v = (n: string) => metricValue(m, `io.${n}`, k);
      const parts: string[] = [];
      const reads = v('reads') ?? 0;
      const writes = v('writes') ?? 0;
      if (reads)
        parts.push(
          `${plural(reads, 'read')} p50/p99/max ${ms(v('read_p50_ns') ?? 0)}/${ms(v('read_p99_ns') ?? 0)}/${ms(v('read_max_ns') ?? 0)} ms`,
        );
      if (writes)
        parts.push(
          `${plural(writes, 'write')} p50/p99/max ${ms(v('write_p50_ns') ?? 0)}/${ms(v('write_p99_ns') ?? 0)}/${ms(v('write_max_ns') ?? 0)} ms`,
        );
      const pw = v('peak_write_bps');
      const pr = (v('peak_read_bps') ?? 0) >= 1e5 ? v('peak_read_bps') : null;
      if (pw || pr)
        parts.push(
          `peak ${pr ? `${fmtMB(pr)} read` : ''}${pr && pw ? ' / ' : ''}${pw ? `${fmtMB(pw)} written` : ''} in a second`,
        );
      const top = l.top({ detector: 'io_latency', device: k });
      if (top)
        parts.push(
          `${plural(Number(top.values.slow_reads ?? 0), 'read')} over ${paramMs(params, 'warn_ns', 1e7)} behind writes, worst ${fmtDur(Number(top.impact_ns))}`,
        );
      l.add(
        `${k}: ${plural(d.value, 'request')}, ${parts.join('; ')}`,
        [
          'requests',
          'reads',
          'writes',
          'read_p50_ns',
          'read_p99_ns',
          'read_max_ns',
          'write_p50_ns',
          'write_p99_ns',
          'write_max_ns',
          'peak_read_bps',
          'peak_write_bps',
        ]
          .map((n) => `io.${n}`)
          .filter((id) => metricValue(m, id, k) !== null),
        { detector: 'io_latency', device: k },
      );
    }
    if (devices.length > 4)
      l.add(`${plural(devices.length - 4, 'more device')} with block requests`, ['io.requests'], null);
  },
};

/** A detector without a writer of its own (user detectors): its count and its top finding. */
function genericLines(l: Lines, det: DetectorInfoForOverview, findings: readonly Finding[]): void {
  const mine = findings.filter((f) => f.detector === det.id && f.parent_id === null);
  const top = mine[0];
  l.add(
    top ? `${det.title}: ${plural(mine.length, 'finding')}, worst: ${top.title}` : `${det.title}: no findings`,
    [],
    { detector: det.id },
  );
}

export function buildOverview(input: Input): Overview {
  const groups: { lines: OverviewLine[]; worst: number; loss: boolean; impact: bigint; order: number }[] = [];
  input.detectors.forEach((det, order) => {
    if (det.status === 'not_traced') {
      groups.push({
        lines: [
          {
            detector: det.id,
            status: 'not_traced',
            severity: null,
            text: `${DETECTOR_LABELS[det.id] ?? det.title}: ${notTracedLabel(det.enabled_listed)}: ${det.hint}`,
            finding_id: null,
            filter: null,
            count: 0,
            metrics: [],
          },
        ],
        worst: 4,
        loss: false,
        impact: 0n,
        order,
      });
      return;
    }
    const l = new Lines(input.findings, det.id);
    const writer = WRITERS[det.id];
    const mine = input.metrics.filter((x) => x.detector === det.id);
    if (writer) writer(l, mine, det.params);
    else genericLines(l, det, input.findings);
    const top = input.findings.find((f) => f.detector === det.id);
    groups.push({
      lines: l.out,
      worst: top ? SEV_ORDER[top.severity] : 3,
      // the same order as the findings' rank (finding.ts rankComparator): a kill before the stalls
      loss: top !== undefined && det.rank === 'loss',
      impact: top?.impact_ns ?? 0n,
      order,
    });
  });
  groups.sort(
    (a, b) =>
      a.worst - b.worst ||
      Number(b.loss) - Number(a.loss) ||
      (a.impact > b.impact ? -1 : a.impact < b.impact ? 1 : 0) ||
      a.order - b.order,
  );
  return { lines: groups.flatMap((g) => g.lines) };
}

/** The overview as plain text lines (the CLI report's first section). */
export function overviewText(o: Overview): string[] {
  const mark: Record<Severity, string> = { critical: 'CRITICAL', warn: 'WARN', info: 'info' };
  return o.lines.map((l) => {
    const tag = l.status === 'not_traced' ? '[not run]' : l.severity ? `[${mark[l.severity]}]` : '[ok]';
    const link =
      l.finding_id !== null ? `  (finding:${l.finding_id}${l.count > 1 ? `, ${l.count} findings` : ''})` : '';
    return `${tag.padEnd(12)} ${l.text}${link}`;
  });
}
