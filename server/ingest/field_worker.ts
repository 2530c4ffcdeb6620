/**
 * The thread that decodes the fields of trace.dat records the main thread
 * framed (model_builder.ts rawRecords), into typed rows whose chunks it
 * posts straight to the store worker.
 *
 * Why a thread: on a large trace.dat the main thread (decoding and filling
 * columns) was the bottleneck while the store worker waited half the time.
 * With the fields decoded here the ingest is a three-stage pipeline, main
 * (framing) -> field worker -> store worker (DuckDB), whose stages the OS
 * spreads over the cores.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { compileRawFieldReaders } from '../decode/trace_dat/raw_field_readers.ts';
import { chunkTransferList, type ChunkData } from '../model/column_chunk.ts';
import { RecordBatchReader } from '../model/record_batch.ts';
import { TableRowWriter, TypedRows } from '../model/typed_rows.ts';
import { typedTableFor } from '../model/typed_tables.ts';
import { BATCHES_CONSUMED, FIELD_FAILED, type FieldToStore, type FieldWorkerInput, type FromFieldWorker, type ToFieldWorker } from './field_protocol.ts';
import { FAILED, FIELD_CHUNKS_CONSUMED, MAX_IN_FLIGHT } from './store_protocol.ts';
import { waitForCounter } from './wait_for_counter.ts';

const input = workerData as FieldWorkerInput;
const control = new Int32Array(input.control);
const storeControl = new Int32Array(input.storeControl);
const storePort = input.storePort;
const port = parentPort!;

function reply(m: FromFieldWorker): void {
  port.postMessage(m);
}

let failed = false;
function fail(err: unknown): void {
  failed = true;
  Atomics.store(control, FIELD_FAILED, 1);
  Atomics.notify(control, BATCHES_CONSUMED);
  reply({ type: 'error', message: (err as Error)?.message ?? String(err) });
}

try {
  let posted = 0;
  const toStore = (m: FieldToStore, transfer: ArrayBuffer[] = []) => storePort.postMessage(m, transfer);
  const postChunk = (table: number, data: ChunkData) => {
    // At most MAX_IN_FLIGHT chunks wait in the store's queue (memory stays bounded).
    waitForCounter(storeControl, FIELD_CHUNKS_CONSUMED, posted - MAX_IN_FLIGHT + 1, FAILED, 'the store worker');
    toStore({ type: 'chunk', table, data }, chunkTransferList(data));
    posted++;
  };
  const typed = new TypedRows(input.layout, postChunk);
  typed.setBase(BigInt(input.tsBaseNs));
  const tables = new Set(input.tables);
  const readers = compileRawFieldReaders(input.spec, (name) => {
    const table = typedTableFor(name);
    const target = table !== null && tables.has(table) ? typed.target(table) : undefined;
    return target ? new TableRowWriter(typed, target, name) : null;
  });

  const decodeBatch = (r: RecordBatchReader) => {
    const count = r.batch.count;
    const bytes = r.bytes;
    for (let i = 0; i < count; i++) {
      const reader = readers[r.formatId(i)];
      if (reader === undefined) throw new Error(`field worker: no reader for event format id ${r.formatId(i)}`);
      const rows = reader.rows;
      rows.startRow(r.id(i), r.ts(i), r.cpu(i), r.utid(i), r.common(i), r.where(i));
      reader.read(bytes, r.offset(i), r.length(i));
      rows.end();
    }
  };

  port.on('message', (m: ToFieldWorker) => {
    if (failed) return;
    try {
      if (m.type === 'batch') {
        decodeBatch(new RecordBatchReader(m.batch));
        Atomics.add(control, BATCHES_CONSUMED, 1);
        Atomics.notify(control, BATCHES_CONSUMED);
      } else if (m.type === 'finish') {
        typed.flush();
        toStore({ type: 'end', dicts: typed.dictLists() });
        reply({ type: 'done' });
      } else {
        storePort.close();
        port.close();
      }
    } catch (err) {
      fail(err);
    }
  });
} catch (err) {
  fail(err);
}
