/**
 * A stallscope trace model -> a Perfetto trace (TracePacket stream) that
 * ui.perfetto.dev and trace_processor open:
 *
 * - the events as ftrace bundles per CPU: typed (the FtraceEvent message
 *   Perfetto has for the event, from protos/ftrace_event.proto) when every
 *   field converts back to the number the kernel recorded, else as a
 *   generic event described by a GenericEventDescriptor (Perfetto v50+), with
 *   each field as the value the model holds (printed flags stay text);
 *   function symbols are interned as kernel symbols, as tracebox does with
 *   symbolize_ksyms;
 * - thread and process names as a ProcessTree;
 * - stallscope's findings as slices on one track per detector
 *   ("stallscope: shrinker_blocking"; overlapping findings go to further
 *   tracks of the same name), their measured values as debug annotations,
 *   each with flows to instants marking the events it is made of on their
 *   threads' tracks; notes as slices on "stallscope: notes".
 *
 * Not carried: common_flags and preempt_count (Perfetto's FtraceEvent has
 * no place trace_processor reads them from), the printed text of events
 * whose fields did not parse (exported as a `raw` field).
 *
 * Streamed: the events are read and written in windows of
 * EXPORT_WINDOW_EVENTS ids, each window's packets handed to `write` before
 * the next is read. Reading the whole trace into event objects and encoding
 * it into one buffer took a server from 141 to 1284 MB for the 1M-event
 * sched_wq.v7 (issue 29's bound is 350 MB whatever the trace), and its
 * ORDER BY over the ftrace_event and args views (a branch per event table)
 * needed more than the read engines' cap.
 */
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { ProtoWriter } from './proto_writer.ts';
import { EventWindows, FieldList, readArgs, readTypedFields, type Ev, type Value } from './event_windows.ts';
import { typedTableFor } from '../../model/typed_tables.ts';
import { collectGarbage } from '../../ingest/ingest_memory.ts';
import { compareBigints, idsSubquery } from '../../engine/union_view_ids.ts';
import { gfpTableFits, isDevField, printedField, userspaceDevFromKernel } from '../../decode/perfetto/kernel_values.ts';
import {
  perfettoType,
  TYPED_EVENTS_BY_NAME,
  FIRST_GENERIC_EVENT_ID,
  F,
  type TypedEventSpec,
  type ScalarKind,
} from '../../decode/perfetto/perfetto_schema.ts';

export interface ExportFindingInput {
  detector: string;
  kind: string;
  severity: string;
  ts_ns: bigint | number | string;
  dur_ns: bigint | number | string | null;
  tid: number | null;
  comm: string | null;
  title: string;
  values: Record<string, unknown>;
  event_ids: (bigint | number | string)[];
}

export interface ExportNoteInput {
  id: string;
  text: string;
  author: string;
  /** ns from the trace's first event (trace_info first_ts). */
  anchor: { t0: number; t1: number };
}

export interface PerfettoExportInput {
  query: <T = Record<string, unknown>>(sql: string) => Promise<T[]>;
  /** The same, as columns (Engine.queryColumns): the events are read this way. */
  queryColumns: (sql: string) => Promise<Record<string, unknown[]>>;
  findings: ExportFindingInput[];
  notes: ExportNoteInput[];
  /** Takes each piece of the file in order (a file's or a response's stream; wait for its drain). */
  write: (bytes: Uint8Array) => Promise<void> | void;
}

export interface PerfettoExportResult {
  /** Bytes written. */
  bytes: number;
  events: number;
  typed: number;
  generic: number;
  findings: number;
  flows: number;
}

/** Events per ftrace bundle (tracebox writes a few pages' worth). */
const BUNDLE_EVENTS = 2000;
/**
 * Event ids read, converted and written at a time. The export's peak grows
 * with it (CLI export of sched_wq.v7, 1M events: 10k 257 MB, 20k 339 MB,
 * 50k 529 MB, 200k 822 MB; the whole trace at once 1319 MB), and so does the
 * CPU of fewer, larger windows (10k 20.7 s, 20k 15.7 s, 50k 14.8 s). Each
 * window's statements are planned anew (~30 ms over the ftrace_event and
 * args views' unions; a prepared statement is planned again when bound).
 * 40k with a collection after every window: many_systems.v7 -15% CPU, but a
 * server's export after its upload peaked at 343-350 MB: too close to 350.
 */
export const EXPORT_WINDOW_EVENTS = 20_000;
/**
 * A full collection every this many windows: V8 let the windows' garbage
 * pile up well past what one window holds. A server's export of sched_wq.v7
 * after its upload: HWM 299-311 -> 414 MB collecting every 5 windows, -> 336
 * every 2 (CPU 13.9 and 15.2 s).
 */
const COLLECT_EVERY_WINDOWS = 2;
/** Flows drawn per finding (a migration finding can list hundreds of events). */
const MAX_FLOWS_PER_FINDING = 16;
const SEQ_FTRACE = 1;
const SEQ_TRACKS = 2;

const SYMBOL_FIELDS = new Set(['shrink', 'function']);
const POINTER_FIELDS = new Set(['shr', 'work']);

type Query = PerfettoExportInput['query'];
type QueryColumns = PerfettoExportInput['queryColumns'];

/** The model's typed tables, read once: a window queries those its events' names map to (typedTableFor). */
async function typedTables(q: Query): Promise<Set<string>> {
  const tables = await q<{ table_name: string }>(
    "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' AND table_name IN (SELECT substr(table_name, 8) FROM information_schema.tables WHERE starts_with(table_name, '_stage_'))",
  );
  return new Set(tables.map((t) => t.table_name));
}

/**
 * The events with ids in [lo, hi), their fields from their typed table or
 * `args` (an untyped event's arg_set_id is its id), by CPU, then time.
 * No ORDER BY in the statements: over the views' unions it needs more than
 * the read engines' cap; the window's rows are sorted here. Read as columns
 * (Engine.queryColumns), not row objects: an object per row and per value
 * was most of the export's JS time.
 */
async function readWindow(cols: QueryColumns, typed: Set<string>, lo: bigint, hi: bigint): Promise<Ev[]> {
  const c = await cols(
    `SELECT e.id, e.ts, e.cpu, t.tid, e.name, e.system, e.arg_set_id, e.raw FROM ftrace_event e LEFT JOIN thread t USING (utid) WHERE e.id >= ${lo} AND e.id < ${hi}`,
  );
  const ids = c.id as bigint[];
  const tss = c.ts as bigint[];
  const cpus = c.cpu as number[];
  const tids = c.tid as (number | null)[];
  const nameCol = c.name as string[];
  const systems = c.system as (string | null)[];
  const argSets = c.arg_set_id as (bigint | null)[];
  const raws = c.raw as (string | null)[];
  // Keyed by the id as a number (ids are row numbers, far below 2^53): a Map hashes numbers faster than bigints.
  const byId = new Map<number, Ev>();
  const names = new Set<string>();
  /** Whether any event has args rows (an untyped event's fields). */
  let untyped = false;
  const evs: Ev[] = new Array(ids.length);
  for (let i = 0; i < ids.length; i++) {
    const name = nameCol[i]!;
    const e: Ev = {
      id: BigInt(ids[i]!),
      ts: BigInt(tss[i]!),
      cpu: Number(cpus[i]),
      tid: Number(tids[i] ?? 0),
      name,
      system: systems[i] ?? null,
      fields: null,
      from: 0,
      to: 0,
      raw: raws[i] ?? null,
    };
    evs[i] = e;
    byId.set(Number(ids[i]), e);
    const table = typedTableFor(name);
    if (table !== null && typed.has(table)) names.add(table);
    if (argSets[i] !== null && argSets[i] !== undefined) untyped = true;
  }
  // Typed tables: one column per field.
  const list = new FieldList();
  for (const table of names) await readTypedFields(cols, table, list, byId, lo, hi);
  // Untyped events: their args, in each event's field order.
  if (untyped) await readArgs(cols, 'SELECT * FROM args', list, byId, lo, hi);
  return evs.sort(byCpuTimeId);
}

/** A window's order: by CPU (a bundle per CPU), then time. */
function byCpuTimeId(a: Ev, b: Ev): number {
  return a.cpu - b.cpu || compareBigints(a.ts, b.ts) || compareBigints(a.id, b.id);
}

/** The events findings' flows point at: id -> event (time, thread, name). */
async function flowTargets(q: Query, ids: bigint[]): Promise<Map<bigint, Pick<Ev, 'id' | 'ts' | 'tid' | 'name'>>> {
  const out = new Map<bigint, Pick<Ev, 'id' | 'ts' | 'tid' | 'name'>>();
  if (ids.length === 0) return out;
  const rows = await q<{ id: bigint; ts: bigint; tid: number | null; name: string }>(
    `SELECT e.id, e.ts, t.tid, e.name FROM ftrace_event e LEFT JOIN thread t USING (utid) WHERE e.id IN ${idsSubquery(ids)}`,
  );
  for (const r of rows)
    out.set(BigInt(r.id), { id: BigInt(r.id), ts: BigInt(r.ts), tid: Number(r.tid ?? 0), name: r.name });
  return out;
}

function writeScalar(w: ProtoWriter, no: number, kind: ScalarKind, v: Value): void {
  if (kind === 'string') w.stringField(no, String(v));
  else w.uintField(no, typeof v === 'string' ? BigInt(v) : v);
}

class Exporter {
  w = new ProtoWriter();
  private readonly symbols = new Map<string, number>();
  private newSymbols: [number, string][] = [];
  /** Generic event ids by event signature; descriptors not yet written. */
  private readonly genericIds = new Map<string, number>();
  private pendingDescriptors: {
    id: number;
    system: string | null;
    name: string;
    fields: [string, number, number][];
  }[] = [];
  private firstFtracePacket = true;
  private firstTrackPacket = true;
  readonly gfpOk: boolean;
  /** A bundle's events, written before the packet around them (one buffer for every bundle). */
  private readonly body = new ProtoWriter();
  typed = 0;
  generic = 0;

  constructor(release: string | null) {
    this.gfpOk = gfpTableFits(release);
  }

  packet(body: (w: ProtoWriter) => void): void {
    this.w.nested(F.trace.packet, () => body(this.w));
  }

  private symbolIid(name: string): number {
    let iid = this.symbols.get(name);
    if (iid === undefined) {
      iid = this.symbols.size + 1;
      this.symbols.set(name, iid);
      this.newSymbols.push([iid, name]);
    }
    return iid;
  }

  /*
   * One event's fields as the message writes them (field number, kind,
   * value), in scratch arrays reused from event to event: arrays and
   * closures per event were much of what the export's collections spent
   * their time on.
   */
  private readonly fieldNos: number[] = [];
  private readonly fieldKinds: ScalarKind[] = [];
  private readonly fieldVals: Value[] = [];
  private readonly fieldKeys: string[] = [];
  private fieldCount = 0;
  /** The generic layout each event name had last: most events of a name have the same fields and kinds. */
  private readonly lastGeneric = new Map<
    string,
    { system: string | null; keys: string[]; kinds: ScalarKind[]; id: number }
  >();

  private pushField(no: number, kind: ScalarKind, v: Value, key = ''): void {
    const i = this.fieldCount++;
    this.fieldNos[i] = no;
    this.fieldKinds[i] = kind;
    this.fieldVals[i] = v;
    this.fieldKeys[i] = key;
  }

  /** The typed message's fields for an event, into the scratch arrays; false when one does not convert back exactly. */
  private typedFields(spec: TypedEventSpec, e: Ev): boolean {
    this.fieldCount = 0;
    const list = e.fields;
    if (!list) return false;
    for (let at = e.from; at < e.to; at++) {
      const name = list.names[at]!;
      const v = list.values[at]!;
      const f = spec.byName.get(name);
      if (!f) return false;
      if (f.kind === 'string') {
        if (typeof v !== 'string') return false;
        this.pushField(f.no, f.kind, v);
        continue;
      }
      if (typeof v !== 'string') {
        // A number where the importer would print text (flags) would not read back the same.
        if (printedField(e.name, name, this.gfpOk) || SYMBOL_FIELDS.has(name) || POINTER_FIELDS.has(name)) return false;
        // Perfetto's dev_t fields hold userspace's makedev() encoding, the model the kernel's (kernel_values.ts).
        this.pushField(f.no, f.kind, isDevField(e.name, name) ? userspaceDevFromKernel(v) : v);
        continue;
      }
      let n: bigint | null = null;
      if (SYMBOL_FIELDS.has(name))
        n =
          /^0x[0-9a-f]+$/.test(v) && BigInt(v) > 0xffffffffn
            ? BigInt(v)
            : /^[A-Za-z_][\w.]*$/.test(v)
              ? BigInt(this.symbolIid(v))
              : null;
      else if (POINTER_FIELDS.has(name)) n = /^0x[0-9a-f]+$/.test(v) && BigInt(v) > 0xffffffffn ? BigInt(v) : null;
      else {
        const p = printedField(e.name, name, this.gfpOk);
        if (p) {
          n = p.parse(v);
          if (n !== null && p.print(n) !== v) n = null;
        }
      }
      if (n === null) return false;
      this.pushField(f.no, f.kind, n);
    }
    return true;
  }

  /** A generic event's fields, into the scratch arrays, and its id, registering its descriptor on first use. */
  private genericFields(e: Ev): number {
    this.fieldCount = 0;
    const list = e.fields;
    if (list) {
      for (let at = e.from; at < e.to; at++) {
        const k = list.names[at]!;
        const v = list.values[at]!;
        this.pushField(
          this.fieldCount + 1,
          typeof v === 'string' ? 'string' : typeof v === 'bigint' && v > BigInt.asIntN(64, v) ? 'uint64' : 'int64',
          v,
          k,
        );
      }
    } else if (e.raw !== null) this.pushField(1, 'string', e.raw, 'raw');
    const n = this.fieldCount;
    const last = this.lastGeneric.get(e.name);
    if (last && last.system === e.system && last.keys.length === n) {
      let same = true;
      for (let i = 0; i < n && same; i++)
        same = last.keys[i] === this.fieldKeys[i] && last.kinds[i] === this.fieldKinds[i];
      if (same) return last.id;
    }
    const keys = this.fieldKeys.slice(0, n);
    const kinds = this.fieldKinds.slice(0, n);
    const sig = `${e.system ?? ''}/${e.name}:${keys.map((k, i) => `${k}=${kinds[i]}`).join(',')}`;
    let id = this.genericIds.get(sig);
    if (id === undefined) {
      id = FIRST_GENERIC_EVENT_ID + this.genericIds.size;
      this.genericIds.set(sig, id);
      const fields = keys.map((k, i): [string, number, number] => [
        k,
        i + 1,
        kinds[i] === 'string' ? 9 : kinds[i] === 'uint64' ? 4 : 3,
      ]);
      this.pendingDescriptors.push({ id, system: e.system, name: e.name, fields });
    }
    this.lastGeneric.set(e.name, { system: e.system, keys, kinds, id });
    return id;
  }

  bundle(cpu: number, evs: Ev[]): void {
    // Events first: they register the symbols and descriptors the packet must carry.
    const body = this.body;
    body.pos = 0;
    for (const e of evs) {
      const spec = TYPED_EVENTS_BY_NAME.get(e.name);
      let id: number;
      if (spec && this.typedFields(spec, e)) {
        id = spec.id;
        this.typed++;
      } else {
        id = this.genericFields(e);
        this.generic++;
      }
      const event = body.begin(F.bundle.event);
      body.uintField(F.event.timestamp, e.ts);
      body.uintField(F.event.pid, e.tid >>> 0);
      // No common_flags: Perfetto declares the field but never writes it, and
      // trace_processor reads a present one as an event of its own.
      const message = body.begin(id);
      for (let i = 0; i < this.fieldCount; i++)
        writeScalar(body, this.fieldNos[i]!, this.fieldKinds[i]!, this.fieldVals[i]!);
      body.end(message);
      body.end(event);
    }
    const descriptors = this.pendingDescriptors;
    this.pendingDescriptors = [];
    const syms = this.newSymbols;
    this.newSymbols = [];
    const first = this.firstFtracePacket;
    this.firstFtracePacket = false;
    this.packet((p) => {
      p.nested(F.packet.ftraceEvents, () => {
        p.uintField(F.bundle.cpu, cpu);
        const bytes = body.finish();
        p.raw(bytes);
        for (const d of descriptors) {
          p.nested(F.bundle.genericEventDescriptors, () => {
            p.uintField(F.descriptor.fieldId, d.id);
            if (d.system) p.stringField(F.descriptor.groupName, d.system);
            p.nested(F.descriptor.eventDescriptor, () => {
              p.stringField(F.descriptor.name, d.name);
              for (const [name, no, type] of d.fields) {
                p.nested(F.descriptor.field, () => {
                  p.stringField(F.descriptor.fieldName, name);
                  p.uintField(F.descriptor.fieldNumber, no);
                  p.uintField(F.descriptor.fieldType, type);
                });
              }
            });
          });
        }
      });
      p.uintField(F.packet.sequenceId, SEQ_FTRACE);
      if (first) p.uintField(F.packet.sequenceFlags, 1);
      if (syms.length > 0) {
        p.nested(F.packet.internedData, () => {
          for (const [iid, name] of syms) {
            p.nested(F.interned.kernelSymbols, () => {
              p.uintField(F.interned.iid, iid);
              p.stringField(F.interned.str, name);
            });
          }
        });
      }
    });
  }

  /** A packet on the track-event sequence. */
  trackPacket(ts: bigint | null, fields: Record<string, unknown>): void {
    const first = this.firstTrackPacket;
    this.firstTrackPacket = false;
    const msg: Record<string, unknown> = {
      ...fields,
      trusted_packet_sequence_id: SEQ_TRACKS,
      sequence_flags: first ? 1 : 2,
    };
    if (ts !== null) msg.timestamp = ts.toString();
    const T = perfettoType('TracePacket');
    this.w.bytesField(F.trace.packet, T.encode(T.fromObject(msg)).finish());
  }
}

export async function exportPerfetto(input: PerfettoExportInput): Promise<PerfettoExportResult> {
  const q = input.query;
  const info = new Map(
    (await q<{ key: string; value: string }>('SELECT key, value FROM trace_info')).map((r) => [r.key, r.value]),
  );
  const kernel = info.get('kernel') ?? null;
  const release = kernel ? (/\b(\d+\.\d+[\w.+-]*)/.exec(kernel)?.[1] ?? null) : null;
  const x = new Exporter(release);
  const base = BigInt(info.get('first_ts') ?? '0');

  // System info: the kernel release tells an importer how GFP flags are numbered.
  const T = perfettoType('TracePacket');
  const systemInfo = {
    utsname: { sysname: 'Linux', release: release ?? undefined },
    num_cpus: info.get('cpus') ? Number(info.get('cpus')) : undefined,
  };
  x.w.bytesField(F.trace.packet, T.encode(T.fromObject({ system_info: systemInfo })).finish());

  // Threads and processes.
  const threads = await q<{ tid: number; name: string | null; pid: number | null; pname: string | null }>(
    'SELECT t.tid, t.name, p.pid, p.name AS pname FROM thread t LEFT JOIN process p USING (upid) ORDER BY t.utid',
  );
  const tree = {
    processes: threads
      .filter((t) => t.pid !== null && Number(t.pid) === Number(t.tid))
      .map((t) => ({ pid: Number(t.pid), ppid: 0, cmdline: [t.pname ?? t.name ?? ''] })),
    threads: threads
      .filter((t) => Number(t.tid) !== 0)
      .map((t) => ({ tid: Number(t.tid), name: t.name ?? undefined, tgid: t.pid ?? undefined })),
  };
  // Stamped at the trace's end, like a scan of /proc when tracing stops: trace_processor
  // then gives each tid's last thread (after forks it saw) the model's name.
  const last = info.get('last_ts') ?? base.toString();
  x.w.bytesField(F.trace.packet, T.encode(T.fromObject({ process_tree: tree, timestamp: last })).finish());

  let written = 0;
  const flush = async () => {
    const bytes = x.w.finish();
    x.w = new ProtoWriter();
    written += bytes.length;
    if (bytes.length > 0) await input.write(bytes);
  };

  // Events, window by window, each window per CPU in bundles.
  const sources = await EventWindows.open(q, input.queryColumns);
  const typed = sources ? new Set<string>() : await typedTables(q);
  const [range] = await q<{ lo: bigint | null; hi: bigint | null }>(
    'SELECT min(id) AS lo, max(id) AS hi FROM ftrace_event',
  );
  let events = 0;
  let windows = 0;
  if (range?.lo !== null && range?.lo !== undefined && range.hi !== null) {
    const last = BigInt(range.hi);
    for (let lo = BigInt(range.lo); lo <= last; lo += BigInt(EXPORT_WINDOW_EVENTS)) {
      const hi = lo + BigInt(EXPORT_WINDOW_EVENTS);
      const evs = sources
        ? (await sources.readBelow(hi)).sort(byCpuTimeId)
        : await readWindow(input.queryColumns, typed, lo, hi);
      events += evs.length;
      for (let i = 0; i < evs.length;) {
        const cpu = evs[i]!.cpu;
        let j = i;
        while (j < evs.length && evs[j]!.cpu === cpu && j - i < BUNDLE_EVENTS) j++;
        x.bundle(cpu, evs.slice(i, j));
        i = j;
      }
      await flush();
      if (++windows % COLLECT_EVERY_WINDOWS === 0) collectGarbage();
    }
  }

  // Findings: slices on lanes of one track per detector, flows to their events.
  const tidOf = await flowTargets(q, [
    ...new Set(input.findings.flatMap((f) => f.event_ids.slice(0, MAX_FLOWS_PER_FINDING).map((id) => BigInt(id)))),
  ]);
  const threadTracks = new Map<number, bigint>();
  let nextUuid = 1000n;
  const threadTrack = (tid: number): bigint => {
    let u = threadTracks.get(tid);
    if (u === undefined) {
      u = nextUuid++;
      threadTracks.set(tid, u);
      const t = threads.find((r) => Number(r.tid) === tid);
      x.trackPacket(null, {
        track_descriptor: {
          uuid: u.toString(),
          thread: { pid: Number(t?.pid ?? tid), tid, thread_name: t?.name ?? undefined },
        },
      });
    }
    return u;
  };
  const lanes = new Map<string, { uuid: bigint; end: bigint }[]>();
  const laneFor = (track: string, ts: bigint, end: bigint): bigint => {
    let ls = lanes.get(track);
    if (!ls) lanes.set(track, (ls = []));
    let lane = ls.find((l) => l.end <= ts);
    if (!lane) {
      lane = { uuid: nextUuid++, end: 0n };
      ls.push(lane);
      x.trackPacket(null, {
        track_descriptor: {
          uuid: lane.uuid.toString(),
          name: track,
          description: 'stallscope findings (stallscope export --format perfetto)',
        },
      });
    }
    lane.end = end;
    return lane.uuid;
  };
  let flowId = 1n;
  let flows = 0;
  const findings = [...input.findings].sort((a, b) =>
    BigInt(a.ts_ns) < BigInt(b.ts_ns) ? -1 : BigInt(a.ts_ns) > BigInt(b.ts_ns) ? 1 : 0,
  );
  for (const f of findings) {
    const ts = BigInt(f.ts_ns);
    const dur = BigInt(f.dur_ns ?? 0);
    const track = laneFor(`stallscope: ${f.detector}`, ts, ts + (dur > 0n ? dur : 1n));
    const ann: Record<string, unknown>[] = [
      { name: 'detector', string_value: f.detector },
      { name: 'kind', string_value: f.kind },
      { name: 'severity', string_value: f.severity },
      { name: 'title', string_value: f.title },
    ];
    if (f.tid !== null) ann.push({ name: 'tid', int_value: String(f.tid) });
    if (f.comm !== null) ann.push({ name: 'comm', string_value: f.comm });
    for (const [k, v] of Object.entries(f.values ?? {})) ann.push(annotation(k, v));
    ann.push({ name: 'event_ids', string_value: f.event_ids.map(String).join(',') });
    const targets = f.event_ids
      .slice(0, MAX_FLOWS_PER_FINDING)
      .map((id) => tidOf.get(BigInt(id)))
      .filter((e) => e !== undefined);
    const ids = targets.map(() => (flowId++).toString());
    flows += ids.length;
    // trace_processor links flows in time order: an event before the finding starts its flow.
    const before = (e: { ts: bigint }) => e.ts < ts;
    const out = ids.filter((_, k) => !before(targets[k]!));
    const into = ids.filter((_, k) => before(targets[k]!));
    x.trackPacket(ts, {
      track_event: {
        type: dur > 0n ? 1 : 3,
        track_uuid: track.toString(),
        name: f.title,
        categories: ['stallscope', f.severity],
        debug_annotations: ann,
        flow_ids: out,
        terminating_flow_ids: into,
      },
    });
    if (dur > 0n) x.trackPacket(ts + dur, { track_event: { type: 2, track_uuid: track.toString() } });
    targets.forEach((e, k) => {
      x.trackPacket(e.ts, {
        track_event: {
          type: 3,
          track_uuid: threadTrack(e.tid).toString(),
          name: e.name,
          categories: ['stallscope'],
          debug_annotations: [
            { name: 'ftrace_event_id', int_value: e.id.toString() },
            { name: 'finding', string_value: f.title },
          ],
          ...(before(e) ? { flow_ids: [ids[k]] } : { terminating_flow_ids: [ids[k]] }),
        },
      });
    });
  }
  for (const n of input.notes) {
    const ts = base + BigInt(Math.round(n.anchor.t0));
    const end = base + BigInt(Math.round(Math.max(n.anchor.t1, n.anchor.t0)));
    const track = laneFor('stallscope: notes', ts, end > ts ? end : ts + 1n);
    const name = n.text.split('\n')[0]!.slice(0, 120) || '(note)';
    const ann = [
      { name: 'text', string_value: n.text },
      { name: 'author', string_value: n.author },
      { name: 'note_id', string_value: n.id },
    ];
    x.trackPacket(ts, {
      track_event: {
        type: end > ts ? 1 : 3,
        track_uuid: track.toString(),
        name,
        categories: ['stallscope', 'note'],
        debug_annotations: ann,
      },
    });
    if (end > ts) x.trackPacket(end, { track_event: { type: 2, track_uuid: track.toString() } });
  }
  await flush();
  return {
    bytes: written,
    events,
    typed: x.typed,
    generic: x.generic,
    findings: findings.length,
    flows,
  };
}

/** A finding value as a debug annotation: integers, reals, booleans and text keep their type. */
function annotation(name: string, v: unknown): Record<string, unknown> {
  if (typeof v === 'boolean') return { name, bool_value: v };
  if (typeof v === 'bigint') return { name, int_value: v.toString() };
  if (typeof v === 'number') return Number.isInteger(v) ? { name, int_value: String(v) } : { name, double_value: v };
  if (typeof v === 'string') return { name, string_value: v };
  return { name, string_value: JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? x.toString() : x)) };
}

/**
 * exportPerfetto into a Node stream (a file, an HTTP response), each piece
 * written once the stream has drained the last; the stream is ended after
 * the last piece, or destroyed with the export's error.
 */
export async function exportPerfettoToStream(
  out: Writable,
  input: Omit<PerfettoExportInput, 'write'>,
): Promise<PerfettoExportResult> {
  try {
    const result = await exportPerfetto({
      ...input,
      write: async (bytes) => {
        if (out.destroyed) throw new Error('perfetto export: the output was closed');
        if (!out.write(bytes)) await once(out, 'drain');
      },
    });
    out.end();
    return result;
  } catch (err) {
    out.destroy(err as Error);
    throw err;
  }
}
