/** Messages between the ingest (main thread) and decode_worker.ts. */
import type { ChunkData } from '../model/column_chunk.ts';
import type { BuilderResult, ModelLayout } from '../model/model_layout.ts';

/** Int32 slots of the shared control buffer. */
export const PRODUCED = 0;
export const CONSUMED = 1;
/** Chunks the worker may post ahead of the main thread (2048 rows each). */
export const MAX_IN_FLIGHT = 32;

export interface WorkerInput {
  file: string;
  label: string;
  workDir: string;
  layout: ModelLayout;
  /** SharedArrayBuffer of 2 Int32 slots: chunks produced, consumed. */
  control: SharedArrayBuffer;
}

export type WorkerMessage =
  | { type: 'chunk'; table: number; data: ChunkData }
  | { type: 'progress'; phase: 'decoding' | 'decompressing'; bytesDone: number; bytesTotal: number | null; events: number }
  | { type: 'done'; result: BuilderResult; compression: string[]; outOfOrderLines: number }
  | {
      type: 'error';
      error:
        | { decode: true; file: string; where: number; unit: 'line' | 'offset'; message: string }
        | { decode: false; message: string };
    };
