import { toJson } from '../../../server/engine/engine.ts';
import { findingToJson } from '../../../server/findings/finding.ts';
import type { RunResult } from '../../../server/findings/run_detectors.ts';

/** A detector run's result as JSON without its timings, samples as plain arrays: two runs compare as text. */
export function comparableRun(r: RunResult): string {
  const samples = [...(r.samples ?? new Map()).values()].map((s) => ({
    ...s,
    byKey: [...s.byKey].map(([k, v]) => [k, [...v]]),
  }));
  const { overview, summaries, metrics, detectors } = r;
  return toJson({ overview, findings: r.findings.map(findingToJson), summaries, metrics, detectors, samples });
}
