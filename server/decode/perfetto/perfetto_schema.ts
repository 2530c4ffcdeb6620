/**
 * Perfetto's trace format as stallscope knows it: the .proto files in
 * protos/ (our own text, Perfetto's field numbers), loaded with protobufjs
 * from the descriptor generated from them (proto_descriptor.ts).
 *
 * The importer's hot path walks the wire format itself (proto_reader.ts)
 * but takes every field number and field type from here, so the .proto
 * files are the one place the format is written down. The export encodes
 * with the same types.
 */
import protobuf from 'protobufjs';
import { loadDescriptor } from './proto_descriptor.ts';

export const perfettoRoot = loadDescriptor();

export function perfettoType(name: string): protobuf.Type {
  return perfettoRoot.lookupType(`stallscope.perfetto.${name}`);
}

/** Field number of `type.field`, from the .proto files (throws on a typo). */
export function fieldNo(type: string, field: string): number {
  const f = perfettoType(type).fields[field];
  if (!f) throw new Error(`no field ${type}.${field} in the Perfetto protos`);
  return f.id;
}

/** How the importer turns a scalar field's varint or bytes into a value. */
export type ScalarKind =
  | 'int32'
  | 'int64'
  | 'uint32'
  | 'uint64'
  | 'sint32'
  | 'sint64'
  | 'bool'
  | 'string'
  | 'bytes'
  | 'fixed64'
  | 'fixed32'
  | 'double';

const SCALAR_KINDS = new Set<string>([
  'int32',
  'int64',
  'uint32',
  'uint64',
  'sint32',
  'sint64',
  'bool',
  'string',
  'bytes',
  'fixed64',
  'fixed32',
  'double',
]);

export interface EventFieldSpec {
  name: string;
  kind: ScalarKind;
}

export interface TypedEventSpec {
  /** FtraceEvent field number (the oneof member). */
  id: number;
  /** Event name (the oneof member's name: the kernel's event name). */
  name: string;
  system: string;
  /** Fields by field number. */
  fields: (EventFieldSpec | undefined)[];
  /** Fields by name, for the export. */
  byName: Map<string, { no: number; kind: ScalarKind }>;
}

/**
 * The kernel event system of a typed event. Perfetto's protos group events
 * by file, not by name, so this is ours: the trace.dat decoder reports the
 * same systems from the kernel's format files.
 */
export function systemOf(name: string): string {
  if (name.startsWith('sched_')) return 'sched';
  if (name.startsWith('task_')) return 'task';
  if (name.startsWith('mm_vmscan_') || name.startsWith('mm_shrink_slab_')) return 'vmscan';
  if (name.startsWith('workqueue_')) return 'workqueue';
  if (name.startsWith('block_')) return 'block';
  if (name.startsWith('softirq_') || name.startsWith('irq_handler_')) return 'irq';
  if (name === 'oom_score_adj_update' || name === 'mark_victim') return 'oom';
  if (name === 'print') return 'ftrace';
  return 'unknown';
}

/** Fields of FtraceEvent that are not the event (the common fields). */
const COMMON_FIELDS = new Set(['timestamp', 'pid', 'common_flags']);

function typedEvents(): Map<number, TypedEventSpec> {
  const ev = perfettoType('FtraceEvent');
  const out = new Map<number, TypedEventSpec>();
  for (const f of ev.fieldsArray) {
    if (COMMON_FIELDS.has(f.name) || f.name === 'generic') continue;
    const t = f.resolvedType;
    if (!(t instanceof protobuf.Type)) continue;
    const fields: (EventFieldSpec | undefined)[] = [];
    const byName = new Map<string, { no: number; kind: ScalarKind }>();
    for (const g of t.fieldsArray) {
      if (!SCALAR_KINDS.has(g.type)) throw new Error(`${t.name}.${g.name}: type ${g.type} not supported`);
      fields[g.id] = { name: g.name, kind: g.type as ScalarKind };
      byName.set(g.name, { no: g.id, kind: g.type as ScalarKind });
    }
    out.set(f.id, { id: f.id, name: f.name, system: systemOf(f.name), fields, byName });
  }
  return out;
}

/** Typed ftrace events declared in protos/ftrace_event.proto, by FtraceEvent field number. */
export const TYPED_EVENTS: ReadonlyMap<number, TypedEventSpec> = typedEvents();
/** The same by event name. */
export const TYPED_EVENTS_BY_NAME: ReadonlyMap<string, TypedEventSpec> = new Map(
  [...TYPED_EVENTS.values()].map((e) => [e.name, e]),
);

/** Field numbers the hot paths use, read once from the protos. */
export const F = {
  trace: { packet: fieldNo('Trace', 'packet') },
  packet: {
    timestamp: fieldNo('TracePacket', 'timestamp'),
    timestampClockId: fieldNo('TracePacket', 'timestamp_clock_id'),
    ftraceEvents: fieldNo('TracePacket', 'ftrace_events'),
    processTree: fieldNo('TracePacket', 'process_tree'),
    clockSnapshot: fieldNo('TracePacket', 'clock_snapshot'),
    trackEvent: fieldNo('TracePacket', 'track_event'),
    traceConfig: fieldNo('TracePacket', 'trace_config'),
    ftraceStats: fieldNo('TracePacket', 'ftrace_stats'),
    systemInfo: fieldNo('TracePacket', 'system_info'),
    compressedPackets: fieldNo('TracePacket', 'compressed_packets'),
    zstdCompressedPackets: fieldNo('TracePacket', 'zstd_compressed_packets'),
    trackDescriptor: fieldNo('TracePacket', 'track_descriptor'),
    serviceEvent: fieldNo('TracePacket', 'service_event'),
    trustedUid: fieldNo('TracePacket', 'trusted_uid'),
    sequenceId: fieldNo('TracePacket', 'trusted_packet_sequence_id'),
    internedData: fieldNo('TracePacket', 'interned_data'),
    sequenceFlags: fieldNo('TracePacket', 'sequence_flags'),
    incrementalStateCleared: fieldNo('TracePacket', 'incremental_state_cleared'),
    previousPacketDropped: fieldNo('TracePacket', 'previous_packet_dropped'),
    firstPacketOnSequence: fieldNo('TracePacket', 'first_packet_on_sequence'),
  },
  interned: {
    kernelSymbols: fieldNo('InternedData', 'kernel_symbols'),
    iid: fieldNo('InternedString', 'iid'),
    str: fieldNo('InternedString', 'str'),
  },
  bundle: {
    cpu: fieldNo('FtraceEventBundle', 'cpu'),
    event: fieldNo('FtraceEventBundle', 'event'),
    lostEvents: fieldNo('FtraceEventBundle', 'lost_events'),
    compactSched: fieldNo('FtraceEventBundle', 'compact_sched'),
    ftraceClock: fieldNo('FtraceEventBundle', 'ftrace_clock'),
    ftraceTimestamp: fieldNo('FtraceEventBundle', 'ftrace_timestamp'),
    bootTimestamp: fieldNo('FtraceEventBundle', 'boot_timestamp'),
    error: fieldNo('FtraceEventBundle', 'error'),
    genericEventDescriptors: fieldNo('FtraceEventBundle', 'generic_event_descriptors'),
  },
  compact: {
    switchTimestamp: fieldNo('FtraceEventBundle.CompactSched', 'switch_timestamp'),
    switchPrevState: fieldNo('FtraceEventBundle.CompactSched', 'switch_prev_state'),
    switchNextPid: fieldNo('FtraceEventBundle.CompactSched', 'switch_next_pid'),
    switchNextPrio: fieldNo('FtraceEventBundle.CompactSched', 'switch_next_prio'),
    internTable: fieldNo('FtraceEventBundle.CompactSched', 'intern_table'),
    switchNextCommIndex: fieldNo('FtraceEventBundle.CompactSched', 'switch_next_comm_index'),
    wakingTimestamp: fieldNo('FtraceEventBundle.CompactSched', 'waking_timestamp'),
    wakingPid: fieldNo('FtraceEventBundle.CompactSched', 'waking_pid'),
    wakingTargetCpu: fieldNo('FtraceEventBundle.CompactSched', 'waking_target_cpu'),
    wakingPrio: fieldNo('FtraceEventBundle.CompactSched', 'waking_prio'),
    wakingCommIndex: fieldNo('FtraceEventBundle.CompactSched', 'waking_comm_index'),
    wakingCommonFlags: fieldNo('FtraceEventBundle.CompactSched', 'waking_common_flags'),
  },
  descriptor: {
    fieldId: fieldNo('FtraceEventBundle.GenericEventDescriptor', 'field_id'),
    eventDescriptor: fieldNo('FtraceEventBundle.GenericEventDescriptor', 'event_descriptor'),
    groupName: fieldNo('FtraceEventBundle.GenericEventDescriptor', 'group_name'),
    name: fieldNo('DescriptorProto', 'name'),
    field: fieldNo('DescriptorProto', 'field'),
    fieldName: fieldNo('FieldDescriptorProto', 'name'),
    fieldNumber: fieldNo('FieldDescriptorProto', 'number'),
    fieldType: fieldNo('FieldDescriptorProto', 'type'),
  },
  event: {
    timestamp: fieldNo('FtraceEvent', 'timestamp'),
    pid: fieldNo('FtraceEvent', 'pid'),
    commonFlags: fieldNo('FtraceEvent', 'common_flags'),
    generic: fieldNo('FtraceEvent', 'generic'),
    sched_switch: fieldNo('FtraceEvent', 'sched_switch'),
  },
  generic: {
    eventName: fieldNo('GenericFtraceEvent', 'event_name'),
    field: fieldNo('GenericFtraceEvent', 'field'),
    name: fieldNo('GenericFtraceEvent.Field', 'name'),
    strValue: fieldNo('GenericFtraceEvent.Field', 'str_value'),
    intValue: fieldNo('GenericFtraceEvent.Field', 'int_value'),
    uintValue: fieldNo('GenericFtraceEvent.Field', 'uint_value'),
  },
} as const;

/**
 * FieldDescriptorProto.Type values (google/protobuf/descriptor.proto) that
 * Perfetto's generic events use, as ScalarKinds.
 */
export const DESCRIPTOR_TYPES: Record<number, ScalarKind> = {
  1: 'double',
  3: 'int64',
  4: 'uint64',
  5: 'int32',
  6: 'fixed64',
  7: 'fixed32',
  8: 'bool',
  9: 'string',
  12: 'bytes',
  13: 'uint32',
  17: 'sint32',
  18: 'sint64',
};

/** Perfetto's first FtraceEvent field number for generic (self-described) events. */
export const FIRST_GENERIC_EVENT_ID = 65536;

/** ClockSnapshot builtin clock ids. */
export const BUILTIN_CLOCK = { REALTIME: 1, MONOTONIC: 3, MONOTONIC_RAW: 5, BOOTTIME: 6 } as const;
