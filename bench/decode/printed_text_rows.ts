/**
 * The field worker's two ways of writing a block or softirq event's shape
 * row, per event, on the many_systems corpus recording's texts (`trace-cmd
 * report -N`, the tracefs text's args): `general` (a string, the event's
 * parser, a fields object, KeptRaw.of, UntypedRows.writePacked) and `scan`
 * (block_bytes.ts / softirq_bytes.ts read the bytes, ShapeRows writes the
 * row, as field_worker.ts writeScannedRow; texts they leave take the general
 * path). CPU ms of one pass over all texts, min and median of 12 passes in
 * one process; run the modes in separate processes, alternated.
 *
 *   npx tsx bench/decode/printed_text_rows.ts general|scan
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { eventNameInfo } from '../../server/decode/ftrace_text/fields/index.ts';
import { KeptRaw } from '../../server/decode/ftrace_text/kept_raw.ts';
import { latin1 } from '../../server/decode/ftrace_text/fields/intern.ts';
import { blockTextScanFor } from '../../server/decode/ftrace_text/fields/block_bytes.ts';
import { SoftirqTextScan, isSoftirqEvent } from '../../server/decode/ftrace_text/fields/softirq_bytes.ts';
import { KV_HEX, KV_INT } from '../../server/decode/ftrace_text/fields/untyped_kv.ts';
import { SHAPE_TABLE_BASE, UntypedRows, type ShapeRows } from '../../server/model/untyped_rows.ts';
import { openDuckDb } from '../../server/engine/engine.ts';
import { ModelStore } from '../../server/model/model_store.ts';

const mode = process.argv[2];
if (mode !== 'general' && mode !== 'scan') throw new Error('usage: printed_text_rows.ts general|scan');

const NAMES = [
  'block_rq_issue',
  'block_rq_complete',
  'block_io_done',
  'block_io_start',
  'block_getrq',
  'block_bio_queue',
  'block_dirty_buffer',
  'block_touch_buffer',
  'block_plug',
  'block_unplug',
  'block_rq_insert',
  'block_split',
  'softirq_raise',
  'softirq_entry',
  'softirq_exit',
];
const dat = fileURLToPath(new URL('../../fixtures/corpus/many_systems.v7.dat', import.meta.url));
const out = execFileSync('trace-cmd', ['report', '-N', ...NAMES.flatMap((n) => ['-F', n]), '-i', dat], {
  encoding: 'latin1',
  maxBuffer: 1 << 30,
});
const texts: string[] = [];
const nameIds: number[] = [];
for (const m of out.matchAll(/^.*?\d+\.\d+: (\w+): +(.*)$/gm)) {
  nameIds.push(NAMES.indexOf(m[1]!));
  texts.push(m[2]!);
}
const bytes = Buffer.from(texts.join('\n'), 'latin1');
const starts = new Int32Array(texts.length);
for (let i = 1; i < texts.length; i++) starts[i] = starts[i - 1]! + texts[i - 1]!.length + 1;

const engine = await openDuckDb(':memory:');
const store = await ModelStore.create(engine);

/** Events per name left to the general path first, as the field worker's KeptRaw gates do. */
const WARM_UP = 2000;

function pass(): number {
  const rows = new UntypedRows(store.layout, () => undefined, SHAPE_TABLE_BASE, 0, undefined, undefined, 0);
  rows.setBase(0n, true);
  const kept = new KeptRaw();
  const readers = NAMES.map((n) => ({
    scan: blockTextScanFor(n) ?? (isSoftirqEvent(n) ? new SoftirqTextScan() : null)!,
    keepsRaw: !isSoftirqEvent(n),
    shapes: new Map<string, ShapeRows>(),
  }));
  const t0 = process.cpuUsage();
  for (let i = 0; i < texts.length; i++) {
    const s = starts[i]!;
    const e = s + texts[i]!.length;
    const nameId = nameIds[i]!;
    if (mode === 'scan' && i > WARM_UP && writeScanned(rows, readers[nameId]!, nameId, i, s, e)) continue;
    const text = latin1(bytes, s, e);
    const view = new Uint8Array(bytes.buffer, bytes.byteOffset + s, e - s);
    const fields = eventNameInfo(NAMES[nameId]!).parse(text, 0, e - s, text, view);
    rows.writePacked(i, i, 0, 0, nameId, 0, s, kept.of(NAMES[nameId]!, text, fields), fields);
  }
  const d = process.cpuUsage(t0);
  return (d.user + d.system) / 1000;
}

function writeScanned(
  rows: UntypedRows,
  r: { scan: ReturnType<typeof blockTextScanFor> | SoftirqTextScan; keepsRaw: boolean; shapes: Map<string, ShapeRows> },
  nameId: number,
  i: number,
  s: number,
  e: number,
): boolean {
  const scan = r.scan!;
  if (!scan.scan(bytes, s, e)) return false;
  const info = scan.info;
  let sr = r.shapes.get(info.sig);
  if (sr === undefined) {
    sr = rows.shapeRows(nameId, info.keys!, new Int8Array(info.keys!.length).fill(-1));
    r.shapes.set(info.sig, sr);
  }
  sr.id = i;
  sr.ts = i;
  sr.cpu = 0;
  sr.utid = 0;
  sr.common = 0;
  sr.where = s;
  sr.raw = r.keepsRaw ? latin1(bytes, s, e) : null;
  if (sr.begin(scan.code) === null) return false;
  for (let k = 0; k < info.keys!.length; k++) {
    const kind = scan.kinds[k]!;
    const col = sr.column(k);
    if (kind === KV_INT) sr.put(col, k, KV_INT, scan.nums[k]!);
    else if (kind === KV_HEX) sr.putHexBytes(col, bytes, scan.starts[k]!, scan.ends[k]!);
    else sr.putTextBytes(col, k, bytes, scan.starts[k]!, scan.ends[k]!);
  }
  sr.end();
  return true;
}

const times: number[] = [];
for (let k = 0; k < 12; k++) times.push(pass());
times.sort((a, b) => a - b);
console.log(
  `${mode}: ${texts.length} events, CPU ms per pass min ${times[0]!.toFixed(1)} median ${times[6]!.toFixed(1)}`,
);
engine.close();
