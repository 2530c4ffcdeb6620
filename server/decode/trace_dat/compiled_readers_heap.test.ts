// What a compiled event reader keeps while it waits for its first record.
// A trace.dat saves the formats of every event of each enabled system
// (`trace-cmd record -e all`: ~2,300); the decoding thread now compiles a
// reader at its event's first record (decode_trace_dat.ts compileLate), but
// a reader's fast() and safe() still wait for their own first call, and a
// recording of many kinds keeps hundreds of readers for the whole decode.
// Each must then keep little more than its generated source: the readers
// compiled on their first call once kept the arrays of source parts their
// compiler built (a closure shares its function's context), and every
// symbolic field its own 1,024-entry cache, ~20 MB of the decoding thread's
// heap on that recording when every format was compiled at the start.
// Measured on a real recording's formats: the heap each compiled, never-run
// reader keeps after a full collection, against the length of the sources
// it would compile (counted here from the same formats' fields).
import { getHeapStatistics } from 'node:v8';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { collectGarbage } from '../../ingest/ingest_memory.ts';
import { SHAPE_LEAD } from '../../model/untyped_rows.ts';
import { compileEvent, makeHelpers, type CompiledEvent } from './event_decoder.ts';
import { parseEventFormat, type EventFormat } from './event_format.ts';
import { FileSource } from './file_source.ts';
import { Kallsyms } from './kallsyms.ts';
import { readTraceDatHeader } from './read_file_header.ts';

const ROOT = path.resolve(import.meta.dirname, '../../..');

/** Heap in use after a full collection. */
function heapUsed(): number {
  collectGarbage();
  collectGarbage();
  return getHeapStatistics().used_heap_size;
}

describe('compiled event readers waiting for their first record', () => {
  it('keep under 9 KiB a format, not the parts of their sources, over a recording of many systems', async () => {
    const src = await FileSource.open(path.join(ROOT, 'fixtures/corpus/many_systems.v7.dat'));
    let formats: EventFormat[];
    try {
      const info = await readTraceDatHeader(src);
      formats = info.formats.map((f) => parseEventFormat(f.text, f.system));
    } finally {
      await src.close();
    }
    expect(formats.length).toBeGreaterThan(100);
    const helpers = makeHelpers(true, Kallsyms.parse(''));
    const fields = formats.reduce((n, f) => n + f.fields.length, 0);
    // Four passes over the formats (fresh helpers' caches would differ only in the first).
    const kept: CompiledEvent[][] = [];
    const before = heapUsed();
    for (let pass = 0; pass < 4; pass++)
      kept.push(formats.map((f) => compileEvent(f, helpers, true, 8, null, false, SHAPE_LEAD)));
    const perFormat = (heapUsed() - before) / (4 * formats.length);
    expect(kept.flat().every((ev) => ev.shaped === null || ev.shaped.keys.length > 0)).toBe(true);
    // This recording's formats have ~4.6 fields each. Measured per format: 14.6 KB
    // when the waiting readers kept their compilers' parts and every symbolic field
    // its cache (main 75d5234), 6.1 KB since (the sources, the compiled event and
    // its closures, the fields' renderers).
    expect(fields / formats.length).toBeLessThan(6);
    expect(perFormat).toBeLessThan(9 * 1024);
  });
});
