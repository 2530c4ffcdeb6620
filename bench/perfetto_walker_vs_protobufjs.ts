/**
 * Why the Perfetto importer walks the wire format itself (proto_reader.ts):
 * the typed ftrace events of a tracebox recording decoded both ways, three
 * rounds: the walker (framing + readFields, with stallscope's value
 * conventions) and protobufjs' FtraceEventBundle.decode (raw values only;
 * it cannot read generic events, whose messages are described at run time).
 *   npx tsx bench/perfetto_walker_vs_protobufjs.ts fixtures/perfetto_reclaim.pftrace
 */
import { readFileSync } from 'node:fs';
import { perfettoType, TYPED_EVENTS } from '../server/decode/perfetto/perfetto_schema.ts';
import { ProtoReader, WIRE_LEN } from '../server/decode/perfetto/proto_reader.ts';
import { BundleEvents, frameBundle } from '../server/decode/perfetto/bundle_events.ts';
import { compileFieldReader, readFields } from '../server/decode/perfetto/event_fields.ts';
const buf = readFileSync(process.argv[2]!);
const bundles: Uint8Array[] = [];
const r = new ProtoReader(buf, 0, buf.length);
while (r.next()) {
  const s = r.bytes();
  const q = new ProtoReader(buf, s, r.pos);
  while (q.next()) {
    if (q.field === 1 && q.wire === WIRE_LEN) {
      const a = q.bytes();
      bundles.push(buf.subarray(a, q.pos));
    } else q.skip();
  }
}
const B = perfettoType('FtraceEventBundle');
const readers = new Map<number, ReturnType<typeof compileFieldReader>>();
function ours() {
  let n = 0;
  const ev = new BundleEvents();
  for (const b of bundles) {
    frameBundle(b, 0, b.length, 0, ev);
    const rr = new ProtoReader(b, 0, 0);
    for (let k = 0; k < ev.count; k++) {
      const spec = TYPED_EVENTS.get(ev.kind[k]!);
      if (!spec) continue;
      let rd = readers.get(spec.id);
      if (!rd) readers.set(spec.id, (rd = compileFieldReader(spec.name, spec.fields, true, true)));
      readFields(rd, rr.reset(ev.a[k]!, ev.b[k]!), null, { n: 0 });
      n++;
    }
  }
  return n;
}
function pbjs() {
  let n = 0;
  for (const b of bundles) {
    const m = B.decode(b) as unknown as { event: Record<string, unknown>[] };
    for (const e of m.event) {
      for (const k of Object.keys(e))
        if (k !== 'timestamp' && k !== 'pid') {
          n++;
          break;
        }
    }
  }
  return n;
}
for (let round = 0; round < 3; round++) {
  let t = performance.now();
  const a = ours();
  const ta = performance.now() - t;
  t = performance.now();
  const b = pbjs();
  const tb = performance.now() - t;
  console.log(
    `walker ${ta.toFixed(0)} ms (${a} typed events)  protobufjs decode ${tb.toFixed(0)} ms (${b} events)  ratio ${(tb / ta).toFixed(1)}x`,
  );
}
