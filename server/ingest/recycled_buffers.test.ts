// Chunk and batch buffers travel back to their producer and are reused:
// with a real MessageChannel, and with a real thread that reads each chunk
// and sends its buffer back, as the store worker does.
import { MessageChannel, Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { CHUNK_ROWS, ColumnChunk, type ChunkData } from '../model/column_chunk.ts';
import { RecycledBuffers, sendBuffersBack } from './recycled_buffers.ts';

const open: { close(): void }[] = [];
afterEach(() => {
  for (const o of open.splice(0)) o.close();
});

function channel() {
  const { port1, port2 } = new MessageChannel();
  const buffers = new RecycledBuffers(port1);
  open.push(buffers, port2);
  return { buffers, back: port2 };
}

describe('RecycledBuffers', () => {
  it('reuses a buffer sent back, zeroed unless asked not to, and never one of another size', () => {
    const { buffers, back } = channel();
    const a = buffers.take(64);
    new Uint8Array(a).fill(7);
    const b = buffers.take(128);
    new Uint8Array(b).fill(9);
    sendBuffersBack(back, [a, b]);
    expect(a.byteLength).toBe(0); // transferred: the sender cannot touch it any more

    const again = buffers.take(64);
    expect(again.byteLength).toBe(64);
    expect([...new Uint8Array(again)].every((x) => x === 0)).toBe(true);
    const kept = buffers.take(128, false);
    expect(new Uint8Array(kept)[0]).toBe(9);
    expect(buffers.take(64).byteLength).toBe(64); // none left of that size: a new one
    expect({ reused: buffers.reused, allocated: buffers.allocated }).toEqual({ reused: 2, allocated: 3 });
  });

  it('column chunks on recycled buffers carry exactly their own rows and NULLs', async () => {
    // The consumer thread sums each chunk's column 0 (NULLs skipped) and
    // sends the buffer back, like the store worker after an append.
    const { port1, port2 } = new MessageChannel();
    const worker = new Worker(
      `const { workerData, parentPort } = require('node:worker_threads');
       const back = workerData.back;
       parentPort.on('message', (d) => {
         const col = d.columns[0];
         const vals = new Int32Array(d.buffer, col.dataOffset, d.rows);
         const valid = col.validityOffset >= 0 ? new Uint32Array(d.buffer, col.validityOffset, ${CHUNK_ROWS / 32}) : null;
         let sum = 0, nulls = 0;
         for (let r = 0; r < d.rows; r++) {
           if (valid && (valid[r >>> 5] & (1 << (r & 31))) === 0) nulls++; else sum += vals[r];
         }
         parentPort.postMessage({ sum, nulls, rows: d.rows });
         back.postMessage([d.buffer], [d.buffer]);
       });`,
      { eval: true, workerData: { back: port2 }, transferList: [port2] },
    );
    const buffers = new RecycledBuffers(port1);
    open.push(buffers, { close: () => void worker.terminate() });
    const seen: { sum: number; nulls: number; rows: number }[] = [];
    worker.on('message', (m) => seen.push(m));

    const chunk = new ColumnChunk(
      [{ name: 'v', kind: 'i32' }],
      (d: ChunkData) => worker.postMessage(d, [d.buffer]),
      buffers,
    );
    const expected: { sum: number; nulls: number; rows: number }[] = [];
    for (let c = 0; c < 40; c++) {
      // Even chunks: every 3rd row NULL; odd chunks: no NULL, fewer rows in the last one.
      const rows = c === 39 ? 100 : CHUNK_ROWS;
      let sum = 0;
      let nulls = 0;
      for (let r = 0; r < rows; r++) {
        chunk.startRow();
        if (c % 2 === 0 && r % 3 === 0) {
          chunk.setNull(0);
          nulls++;
        } else {
          chunk.setInt(0, c + r);
          sum += c + r;
        }
        chunk.endRow();
      }
      if (c === 39) chunk.flush();
      expected.push({ sum, nulls, rows });
      // Let the consumer catch up now and then, so buffers come back mid-stream.
      if (c % 8 === 7) await until(() => seen.length === c + 1);
    }
    await until(() => seen.length === 40);
    expect(seen).toEqual(expected);
    expect(buffers.reused).toBeGreaterThan(0);
  });
});

async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(done()).toBe(true);
}
