// The bytes a thread's column chunks hold while they fill stay within
// OpenChunkBudget's budget (plus the one chunk taking a buffer), whatever the
// number of tables: a real `-e all` recording (219 event names) decoded and
// written on this thread, as the field worker writes its rows. The bytes are
// counted here, from the buffers taken and the chunks handed over, not by the
// budget. Rows handed over part-filled must reach every table unchanged and
// in order: each table's rows are compared with those of an unbounded run.
import { createHash, type Hash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeFile } from '../decode/decode_file.ts';
import { openDuckDb } from '../engine/engine.ts';
import type { BufferSource } from './buffer_source.ts';
import type { ChunkData } from './column_chunk.ts';
import { ModelBuilder } from './model_builder.ts';
import type { ModelLayout } from './model_layout.ts';
import { ModelStore } from './model_store.ts';
import { OpenChunkBudget } from './open_chunk_budget.ts';

const FIXTURE = path.resolve(import.meta.dirname, '../../fixtures/all_events_small.v7.dat');
const BUDGET_BYTES = 1 << 20;

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-open-chunks-'));
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

async function modelLayout(): Promise<ModelLayout> {
  const engine = await openDuckDb(':memory:');
  try {
    return (await ModelStore.create(engine)).layout;
  } finally {
    engine.close();
  }
}

/** Bytes per row of a column's values in a chunk's buffer (column_chunk.ts), 0 for str. */
function bytesPerRow(kind: string): number {
  return kind === 'i32' ? 4 : kind === 'i64' || kind === 'f64' ? 8 : kind === 'bool' ? 1 : 0;
}

/**
 * Decodes the fixture on this thread into chunks taken through `wrap(buffers)`.
 * Returns the most bytes taken and not yet handed over, the largest buffer
 * taken, the events, and a digest of each table's rows in the order they came.
 */
async function decodeCounting(layout: ModelLayout, wrap: (buffers: BufferSource) => BufferSource) {
  let held = 0;
  let peakHeld = 0;
  let largest = 0;
  const buffers: BufferSource = {
    take(bytes) {
      held += bytes;
      peakHeld = Math.max(peakHeld, held);
      largest = Math.max(largest, bytes);
      return new ArrayBuffer(bytes);
    },
  };
  const rows = new Map<number, { hash: Hash; count: number }>();
  const onChunk = (table: number, d: ChunkData) => {
    held -= d.buffer.byteLength;
    let t = rows.get(table);
    if (t === undefined) rows.set(table, (t = { hash: createHash('sha256'), count: 0 }));
    t.count += d.rows;
    // Row by row (a digest that does not see where chunks end), each column's value or NULL.
    const valid = d.columns.map((c) =>
      c.validityOffset >= 0 ? new Uint32Array(d.buffer, c.validityOffset, Math.ceil(d.rows / 32)) : null,
    );
    for (let r = 0; r < d.rows; r++) {
      d.columns.forEach((c, i) => {
        const v = valid[i];
        if (v !== null && (v![r >>> 5]! & (1 << (r & 31))) === 0) t.hash.update('\0N');
        else if (c.kind === 'str') t.hash.update(`\0s${c.strings?.[r] ?? ''}`);
        else t.hash.update(new Uint8Array(d.buffer, c.dataOffset + r * bytesPerRow(c.kind), bytesPerRow(c.kind)));
      });
    }
  };
  const memory = wrap(buffers);
  const builder = new ModelBuilder(layout, onChunk, null, memory);
  await decodeFile(FIXTURE, builder, { label: 'all_events_small.v7.dat', scratchDir: scratch });
  builder.finish();
  const digests = new Map([...rows].map(([table, t]) => [table, `${t.count} ${t.hash.digest('hex')}`]));
  return { peakHeld, largest, events: builder.eventCount, digests, memory };
}

describe('OpenChunkBudget', () => {
  it("bounds the bytes of the chunks being filled on a many-table trace, and every table's rows stay the same", async () => {
    const layout = await modelLayout();
    const expected = JSON.parse(fs.readFileSync(FIXTURE.replace(/\.v7\.dat$/, '.counts.json'), 'utf8')) as {
      events_by_name: Record<string, number>;
    };
    const total = Object.values(expected.events_by_name).reduce((a, n) => a + n, 0);

    const unbounded = await decodeCounting(layout, (b) => b);
    expect(unbounded.events).toBe(total);
    // Without a budget the chunks being filled pass it, so the case below tests something.
    expect(unbounded.peakHeld).toBeGreaterThan(2 * BUDGET_BYTES);

    const bounded = await decodeCounting(layout, (b) => new OpenChunkBudget(BUDGET_BYTES, b));
    expect(bounded.events).toBe(total);
    // Within the budget, plus the buffer of the chunk taking one when the others are flushed.
    expect(bounded.peakHeld).toBeLessThanOrEqual(BUDGET_BYTES + bounded.largest);
    expect((bounded.memory as OpenChunkBudget).flushes).toBeGreaterThan(0);
    // The same rows in every table, in the same order; only where chunks end moved.
    expect(bounded.digests).toEqual(unbounded.digests);
  });
});
