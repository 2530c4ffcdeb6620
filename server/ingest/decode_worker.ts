/**
 * Decoding on a worker thread: file -> decoder -> ModelBuilder -> column
 * chunks posted (transferred, not copied) to the thread that owns DuckDB.
 *
 * Why: on the ingest path, decoding and row building are pure JS while
 * appending to DuckDB is native work on the main thread; running them on
 * two threads overlaps the two halves. Backpressure: at most MAX_IN_FLIGHT
 * chunks wait for the main thread (a few MB), so memory stays bounded
 * however large the file.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { decodeFile } from '../decode/decode_file.ts';
import { DecodeError } from '../decode/decoded_event.ts';
import { chunkTransferList } from '../model/column_chunk.ts';
import { ModelBuilder } from '../model/model_builder.ts';
import type { ModelLayout } from '../model/model_layout.ts';
import { CONSUMED, MAX_IN_FLIGHT, PRODUCED, type WorkerInput, type WorkerMessage } from './decode_protocol.ts';

const input = workerData as WorkerInput;
const control = new Int32Array(input.control);
const port = parentPort!;

function post(message: WorkerMessage, transfer: ArrayBuffer[] = []): void {
  port.postMessage(message, transfer);
}

async function main(): Promise<void> {
  const builder = new ModelBuilder(input.layout as ModelLayout, (table, data) => {
    // Wait while the main thread is MAX_IN_FLIGHT chunks behind.
    for (;;) {
      const consumed = Atomics.load(control, CONSUMED);
      if (Atomics.load(control, PRODUCED) - consumed < MAX_IN_FLIGHT) break;
      Atomics.wait(control, CONSUMED, consumed, 1000);
    }
    Atomics.add(control, PRODUCED, 1);
    post({ type: 'chunk', table, data }, chunkTransferList(data));
  });
  let lastProgress = 0;
  const result = await decodeFile(input.file, builder, {
    label: input.label,
    scratchDir: input.workDir,
    onProgress: (phase, bytesDone, bytesTotal) => {
      const now = performance.now();
      if (now - lastProgress < 100) return;
      lastProgress = now;
      post({ type: 'progress', phase, bytesDone, bytesTotal, events: builder.eventCount });
    },
  });
  post({ type: 'done', result: builder.finish(), compression: result.compression, outOfOrderLines: result.outOfOrderLines });
}

main().catch((err: unknown) => {
  const e = err as Error;
  post({
    type: 'error',
    error:
      err instanceof DecodeError
        ? { decode: true, file: err.file, where: err.where, unit: err.unit, message: e.message }
        : { decode: false, message: e.stack ?? String(e) },
  });
});
