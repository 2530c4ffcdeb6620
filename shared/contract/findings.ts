/** Wire types shared by server and app (see shared/contract/README.md). Pure types: no Node or DOM imports. */

import type { Severity } from './api.ts';

/** The findings a line summarises: the app's findings filter, as data. */
export interface OverviewFilter {
  detector: string;
  kind?: string;
  comm?: string;
  shrinker?: string;
  /** A block device ('7,2'): findings whose values.device is it. */
  device?: string;
}

export interface OverviewLine {
  detector: string;
  /** 'findings': the line summarises findings; 'quiet': traced, nothing over the thresholds; 'not_traced'. */
  status: 'findings' | 'quiet' | 'not_traced';
  /** The worst severity among the findings it summarises (null: none). */
  severity: Severity | null;
  text: string;
  /** The finding the line is about (the top-ranked of its filter), or null. */
  finding_id: number | null;
  /** The findings it summarises (null for a line without findings). */
  filter: OverviewFilter | null;
  /** How many findings match the filter. */
  count: number;
  /** Ids of the metrics the text quotes. */
  metrics: string[];
}

/** What became of one selected detector in a run. */
export interface DetectorRun {
  id: string;
  title: string;
  builtin: boolean;
  /** 'ok': it ran; 'not_traced': the trace lacks tracepoints it needs (it did not run). */
  status: 'ok' | 'not_traced';
  /** @requires groups with no event in the trace, as `system:a|system:b`. */
  missing: string[];
  /** What to enable when not traced, e.g. 'enable vmscan:mm_shrink_slab_start/end'. */
  hint: string;
  /** Its findings per severity. */
  counts: Record<Severity, number>;
  /** @impact and @severity lines of its header. */
  impact: string;
  severity_rule: string;
  /** The parameter values it ran with (text, as `--param` takes them). */
  params: Record<string, string>;
}
