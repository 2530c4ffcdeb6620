/**
 * Where a selected finding opens the timeline. The list's order, filters and
 * `]`/`[` stepping are app/state/findings_query.ts.
 */

/** A window showing the finding with context on both sides (never narrower than 100 us). */
export function windowFor(f: { ts: number; dur: number }): { t0: number; t1: number } {
  const dur = Math.max(0, f.dur);
  const pad = Math.max(dur * 0.35, 50_000);
  return { t0: Math.floor(f.ts - pad), t1: Math.ceil(f.ts + dur + pad) };
}
