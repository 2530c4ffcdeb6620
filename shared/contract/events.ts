/** Wire types shared by server and app (see shared/contract/README.md). Pure types: no Node or DOM imports. */

export interface EventInfo {
  id: number;
  /** Absolute ns as a decimal string (exact). */
  ts_ns: string;
  /** ns relative to the trace's first event. */
  ts: number;
  cpu: number;
  utid: number | null;
  tid: number | null;
  comm: string | null;
  name: string;
  system: string | null;
  /** Typed table row without the common columns, or args, or {} */
  fields: Record<string, unknown>;
  /** The table the fields come from ('args' for untyped events). */
  table: string | null;
  line: string;
}

export interface EventListRow {
  /** Row number in the filtered window. */
  index: number;
  id: number;
  /** Relative ns. */
  ts: number;
  cpu: number;
  utid: number | null;
  tid: number | null;
  comm: string | null;
  name: string;
  /** The event's arguments as `trace-cmd report` prints them. */
  args: string;
}
