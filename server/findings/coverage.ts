/**
 * Which tracepoints a trace has, and so which detectors could look at all.
 *
 * A detector declares what it needs in its header (`@requires
 * vmscan:mm_shrink_slab_start vmscan:mm_shrink_slab_end`, alternatives
 * joined by `|`). A trace without them gets "not traced: enable
 * vmscan:mm_shrink_slab_start/end" in the overview, the report and the JSON,
 * instead of a silent "0 findings" that reads as "nothing wrong" (as
 * DevTools' insights declare their trace-event dependencies).
 *
 * A trace.dat says which events the recording enabled (trace-cmd saves the
 * format of exactly those; the model keeps the list as trace_info
 * `meta.events`): a tracepoint is traced when it was enabled, even if it
 * never fired (then the detector runs and finds nothing, which is a finding
 * of its own: "reclaim wrote no pages"). Text cannot tell "enabled, never
 * fired" from "not enabled": there a tracepoint counts as traced when the
 * trace holds at least one of its events, and one with none is "not seen",
 * not "not traced": the user may well have enabled it (`-e writeback` with
 * no task dirty-throttled), and telling them to enable it would be wrong.
 */
import type { Engine } from '../engine/engine.ts';
import type { DetectorDef } from './detector_registry.ts';
import { TYPED_TABLES } from '../model/typed_tables.ts';

export interface DetectorCoverage {
  /** 'traced': every @requires group has an event in the trace; 'not_traced': some group has none. */
  status: 'traced' | 'not_traced';
  /** The groups with no event, each as `system:a|system:b`. */
  missing: string[];
  /** What to enable, e.g. 'enable vmscan:mm_shrink_slab_start/end' ('' when traced). */
  hint: string;
  /** The trace lists the events its recording enabled (TracedEvents.enabledListed). */
  enabledListed: boolean;
}

/**
 * The tracepoints a detector can count on: those the recording enabled when
 * the trace lists them (trace.dat, Perfetto), else those with at least one
 * event (text, hand-made models).
 */
export interface TracedEvents {
  /** Event names, without their system. */
  names: ReadonlySet<string>;
  /** Systems whose every event was enabled (a Perfetto config's 'vmscan/*'; '*' for all). */
  systems?: ReadonlySet<string>;
  /** Event names the recorder could not enable (they do not count, even under an enabled system). */
  failed?: ReadonlySet<string>;
  /** Whether `names` is the recording's list of enabled events (else: the events seen). */
  enabledListed: boolean;
}

/** Event names (without system) the recording enabled (trace.dat), else those the trace has at least one event of. */
export async function tracedEventNames(engine: Engine): Promise<TracedEvents> {
  const names = new Set<string>();
  const tables = new Set(
    (
      await engine.query<{ name: string }>(
        `SELECT table_name AS name FROM duckdb_tables() UNION SELECT view_name FROM duckdb_views()`,
      )
    ).map((r) => r.name),
  );
  if (tables.has('trace_info')) {
    const [row] = await engine.query<{ value: string }>(
      `SELECT value FROM trace_info WHERE key = 'meta.events' LIMIT 1`,
    );
    if (row?.value) {
      // 'system:name', a bare 'name', 'system:*' (every event of the system) and '!system:name'
      // (enabled by a wildcard but refused): server/decode/perfetto/decode_perfetto.ts configEventList
      const systems = new Set<string>();
      const failed = new Set<string>();
      for (const e of row.value.split(',')) {
        if (!e) continue;
        if (e.startsWith('!')) failed.add(eventOf(e.slice(1)));
        else if (e.endsWith(':*')) systems.add(e.slice(0, -2));
        else names.add(eventOf(e));
      }
      // an event that fired was enabled, listed or not (a recorder may enable some on its own)
      if (tables.has('_event_name'))
        for (const r of await engine.query<{ name: string }>(
          'SELECT DISTINCT name FROM _event_name WHERE name IS NOT NULL',
        ))
          names.add(r.name);
      return { names, systems, failed, enabledListed: true };
    }
  }
  if (tables.has('_event_name')) {
    for (const r of await engine.query<{ name: string }>(
      'SELECT DISTINCT name FROM _event_name WHERE name IS NOT NULL',
    ))
      names.add(r.name);
  }
  if (names.size > 0) return { names, enabledListed: false };
  // A model filled without the event name table (hand-made databases): the typed tables say it.
  for (const t of TYPED_TABLES) {
    if (!tables.has(t)) continue;
    const cols = await engine.query<{ column_name: string }>(
      `SELECT column_name FROM duckdb_columns() WHERE table_name = '${t}' AND column_name = 'event'`,
    );
    if (cols.length) {
      for (const r of await engine.query<{ e: string | null }>(
        `SELECT DISTINCT coalesce(event, '${t}') AS e FROM "${t}"`,
      ))
        if (r.e) names.add(r.e);
    } else if ((await engine.query(`SELECT 1 FROM "${t}" LIMIT 1`)).length) {
      names.add(t);
    }
  }
  return { names, enabledListed: false };
}

function eventOf(req: string): string {
  return req.slice(req.indexOf(':') + 1);
}
const systemOf = (req: string) => req.slice(0, Math.max(0, req.indexOf(':')));

/** Whether one required tracepoint ('system:name') was traced. */
function isTraced(req: string, traced: TracedEvents): boolean {
  const name = eventOf(req);
  if (traced.failed?.has(name)) return false;
  return traced.names.has(name) || !!traced.systems?.has(systemOf(req)) || !!traced.systems?.has('*');
}

/** Coverage of one detector given the traced names. */
export function detectorCoverage(det: Pick<DetectorDef, 'requires'>, traced: TracedEvents): DetectorCoverage {
  const { enabledListed } = traced;
  const missing = det.requires.filter((group) => !group.some((r) => isTraced(r, traced)));
  if (missing.length === 0) return { status: 'traced', missing: [], hint: '', enabledListed };
  const enable = `enable ${enableList(missing.map((g) => g[0]!))}`;
  return {
    status: 'not_traced',
    missing: missing.map((g) => g.join('|')),
    hint: enabledListed ? enable : `${enable} if it was off (this trace shows only events that fired)`,
    enabledListed,
  };
}

/**
 * 'vmscan:mm_shrink_slab_start/end' for a begin/end (start/end) pair of one
 * system, else the names joined with ', '.
 */
export function enableList(reqs: string[]): string {
  const out: string[] = [];
  const used = new Set<number>();
  reqs.forEach((r, i) => {
    if (used.has(i)) return;
    const m = /^(.*_)(begin|start)$/.exec(r);
    if (m) {
      const j = reqs.findIndex((x, k) => !used.has(k) && k !== i && x === `${m[1]}end`);
      if (j >= 0) {
        used.add(j);
        out.push(`${r}/end`);
        return;
      }
    }
    out.push(r);
  });
  return out.join(', ');
}
