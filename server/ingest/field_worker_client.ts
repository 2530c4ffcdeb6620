/**
 * The main thread's handle on field_worker.ts: the ModelBuilder's
 * RawRecordTarget. When the decoder first offers raw records (trace.dat
 * records or text events), it hands the job to a field thread (an idle one
 * from worker_pool.ts, or a new one), which sends its chunks straight to
 * the store worker; this side posts record batches (with backpressure) and,
 * at the end, waits until the field worker has handed everything to the
 * store.
 */
import { MessageChannel, type Worker } from 'node:worker_threads';
import type { BufferSource } from '../model/buffer_source.ts';
import type { RawRecordTarget, RawSpec } from '../model/model_builder.ts';
import type { ModelLayout } from '../model/model_layout.ts';
import { batchTransferBytes, batchTransferList, type RecordBatchData } from '../model/record_batch.ts';
import {
  BATCHES_CONSUMED_KIB,
  FIELD_CONTROL_BYTES,
  FIELD_FAILED,
  type FieldWorkerInput,
  type FromFieldWorker,
  type ToFieldWorker,
} from './field_protocol.ts';
import type { StoreWorkerClient } from './store_worker_client.ts';
import { RecycledBuffers } from './recycled_buffers.ts';
import { InFlightBudget } from './in_flight_bytes.ts';
import { IN_FLIGHT_BUDGET_BYTES } from './ingest_memory.ts';
import { workerEntry } from './worker_bundle.ts';
import { workerReplies, type WorkerReplies } from './worker_replies.ts';
import { fieldWorkers } from './worker_pool.ts';

export class FieldWorkerClient implements RawRecordTarget {
  private worker: Worker | null = null;
  private replies: WorkerReplies<FromFieldWorker> | null = null;
  private readonly counters = new Int32Array(new SharedArrayBuffer(FIELD_CONTROL_BYTES));
  /** The batches' bytes posted and not yet decoded. */
  private readonly inFlight = new InFlightBudget(
    this.counters,
    BATCHES_CONSUMED_KIB,
    FIELD_FAILED,
    IN_FLIGHT_BUDGET_BYTES / 1024,
    'the field worker',
  );
  private finished = false;
  private closed: Promise<void> | null = null;
  /** The batches' buffers come back on this channel once decoded. */
  private readonly batchChannel = new MessageChannel();
  private readonly returned = new RecycledBuffers(this.batchChannel.port1);

  private constructor(
    private readonly layout: ModelLayout,
    private readonly store: StoreWorkerClient,
    private readonly workerPath: string | URL,
  ) {}

  /** Ready to start the thread when the decoder offers raw records (finds or builds its bundle now). */
  static async prepare(layout: ModelLayout, store: StoreWorkerClient): Promise<FieldWorkerClient> {
    return new FieldWorkerClient(layout, store, await workerEntry('field_worker'));
  }

  get batchMemory(): BufferSource {
    return this.returned;
  }

  /** Whether raw records were offered (the thread runs). */
  get started(): boolean {
    return this.worker !== null;
  }

  start(spec: RawSpec, tsBaseNs: bigint, tables: string[]): void {
    if (this.worker) throw new Error('field worker started twice');
    const { port1, port2 } = new MessageChannel();
    this.store.attachFieldChannel(port2);
    const input: FieldWorkerInput = {
      layout: this.layout,
      spec,
      tsBaseNs: tsBaseNs.toString(),
      tables,
      control: this.counters.buffer as SharedArrayBuffer,
      storeControl: this.store.control,
      storePort: port1,
      batchReturn: this.batchChannel.port2,
    };
    this.worker = fieldWorkers.take(this.workerPath);
    this.replies = workerReplies<FromFieldWorker>(this.worker, 'field worker');
    this.worker.postMessage({ type: 'job', input } satisfies ToFieldWorker, [port1, this.batchChannel.port2]);
  }

  /** Hands a batch over (transferred). Blocks while the batches in the thread's queue hold IN_FLIGHT_BUDGET_BYTES. */
  batch(b: RecordBatchData): void {
    const kib = this.inFlight.reserve(batchTransferBytes(b));
    this.worker!.postMessage({ type: 'batch', batch: b, kib } satisfies ToFieldWorker, batchTransferList(b));
  }

  /** Whether the thread flagged a failure (its error comes from finish()). */
  failed(): boolean {
    return Atomics.load(this.counters, FIELD_FAILED) !== 0;
  }

  /** After the last batch: resolves once every chunk and the dictionaries are on their way to the store. */
  async finish(): Promise<void> {
    if (!this.worker) return;
    this.worker.postMessage({ type: 'finish' } satisfies ToFieldWorker);
    await this.replies!.expect('done');
    this.finished = true;
    if (process.env.STALLSCOPE_TIMING)
      process.stderr.write(
        `[timing] main thread: ${this.inFlight.describe('batches to the field worker')}; ${this.returned.describe()}\n`,
      );
  }

  /** The thread's own error, after it flagged a failure. */
  async rethrowFailure(): Promise<never> {
    await this.replies?.expect('done');
    throw new Error('field worker: stopped without an error');
  }

  /** Ends this job: a finished one gives the thread back to the pool, otherwise it is terminated. Idempotent. */
  close(): Promise<void> {
    this.closed ??= (async () => {
      this.returned.close();
      if (!this.worker) return;
      this.replies!.detach();
      if (this.finished) {
        fieldWorkers.give(this.worker, this.workerPath);
        return;
      }
      this.worker.postMessage({ type: 'abort' } satisfies ToFieldWorker);
      await fieldWorkers.discard(this.worker);
    })();
    return this.closed;
  }
}
