/** Wire types shared by server and app (see shared/contract/README.md). Pure types: no Node or DOM imports. */

export interface ColumnInfo {
  name: string;
  /** DuckDB's type, e.g. BIGINT, VARCHAR, STRUCT(a INTEGER). */
  type: string;
}

export interface QueryResult {
  columns: ColumnInfo[];
  /** One array per column, JSON-safe: integers past 2^53 as decimal strings, nested values as JSON. */
  cols: unknown[][];
  rowCount: number;
  /** More rows than maxRows: the first maxRows are returned. */
  truncated: boolean;
  statements: number;
  elapsedMs: number;
}

export interface CatalogColumn {
  name: string;
  type: string;
  description?: string;
}

export interface CatalogTable {
  name: string;
  kind: 'table' | 'view';
  description?: string;
  columns: CatalogColumn[];
  /** A typed event table (one column per field of the events it receives). */
  typed: boolean;
}

export interface Catalog {
  tables: CatalogTable[];
  /** The detectors' ss_* macros (queries/detectors/lib/macros.sql), usable in queries. */
  macros: Array<{ name: string; params: string; description: string }>;
}

export interface ThreadHit {
  utid: number;
  tid: number | null;
  name: string | null;
  upid: number | null;
  pid: number | null;
  process: string | null;
  runNs: number;
  events: number;
}

export interface ProcessHit {
  upid: number;
  pid: number | null;
  name: string | null;
  threads: Array<{ utid: number; tid: number | null; name: string | null }>;
}

export interface EventNameHit {
  name: string;
  count: number;
}

export interface ValueHit {
  table: string;
  field: string;
  value: string;
  count: number;
}

export interface SearchResult {
  query: string;
  threads: ThreadHit[];
  processes: ProcessHit[];
  events: EventNameHit[];
  values: ValueHit[];
}

export interface Match {
  /** What a step selects: an event, or a thread's run on a CPU (sched_slice). */
  kind: 'event' | 'sched';
  id: number;
  /** Relative ns. */
  ts: number;
  dur: number;
  cpu: number | null;
  utid: number | null;
}

export interface StateTime {
  utid: number;
  tid: number | null;
  name: string | null;
  state: string;
  durNs: number;
  count: number;
}

export interface CpuTime {
  utid: number;
  tid: number | null;
  name: string | null;
  durNs: number;
  cpus: number[];
}

export interface SliceStats {
  category: string;
  name: string | null;
  count: number;
  sumNs: number;
  avgNs: number;
  maxNs: number;
  open: number;
}

export interface RangeSummary {
  /** Relative ns. */
  t0: number;
  t1: number;
  covered: { threads: number[] | 'all'; cpus: number[] | 'all'; categories: string[] | 'all' };
  threadStates: StateTime[];
  cpuTime: CpuTime[];
  eventCounts: Array<{ name: string; count: number }>;
  slices: SliceStats[];
}
