/**
 * Builder and store on one thread: the EventSink tests and small inputs use.
 * Ingests append on a worker thread instead (ingest/store_worker.ts).
 */
import type { DecodedEvent, EventSink, SkippedInput, TraceHeader } from '../decode/decoded_event.ts';
import type { Engine } from '../engine/engine.ts';
import { ModelBuilder } from './model_builder.ts';
import { ModelStore, type WriterSummary } from './model_store.ts';

export { SCHEMA_SQL_PATH, type WriterSummary } from './model_store.ts';

export class ModelWriter implements EventSink {
  private constructor(
    private readonly store: ModelStore,
    private readonly builder: ModelBuilder,
  ) {}

  static async create(engine: Engine): Promise<ModelWriter> {
    const store = await ModelStore.create(engine);
    return new ModelWriter(store, new ModelBuilder(store.layout, (table, data) => store.append(table, data)));
  }

  header(header: TraceHeader): void {
    this.builder.header(header);
  }
  event(event: DecodedEvent): void {
    this.builder.event(event);
  }
  lostEvents(cpu: number, count: number | null, where: number): void {
    this.builder.lostEvents(cpu, count, where);
  }
  skipped(problem: SkippedInput): void {
    this.builder.skipped(problem);
  }
  threadName(tid: number, name: string | null, tgid: number | null): void {
    this.builder.threadName(tid, name, tgid);
  }

  async finish(): Promise<WriterSummary> {
    return this.store.finish(this.builder.finish());
  }
}
