/**
 * GET /api/traces/:id/tracks/… : one track's rows over a window, binned to the
 * pixel columns it is drawn on. Times are ns relative to the trace's first
 * event, as JS numbers. Pure types (see shared/contract/README.md).
 */

/** Columnar rows: one array per column (ids as numbers; ids beyond 2^53 are not expected). */
export type Columns = Record<string, Array<number | string | null>>;

export interface TrackData {
  t0: number;
  t1: number;
  px: number;
  /** ns per pixel column used for binning. */
  res: number;
  rows: number;
  cols: Columns;
  /** Anything else the track needs (counter: value before t0). */
  extra?: Record<string, unknown>;
}
