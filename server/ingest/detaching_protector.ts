/**
 * Detaches one empty ArrayBuffer in this thread before it decodes anything.
 *
 * Why: V8 compiles typed-array accesses without a "detached?" check while no
 * ArrayBuffer of the isolate has ever been detached (its ArrayBufferDetaching
 * protector). The ingest transfers buffers between threads (column chunks to
 * the store worker, batches to the field worker, spent buffers back), and
 * each transfer detaches. The first one, a few hundred ms into the decode,
 * threw away every optimized function that touched a typed array at once:
 * on sched_wq.v7, ~15 on the main thread (the generated readers, row
 * writers, decodePage, ...) and ~20 on the field worker, which V8 then ran
 * unoptimized again and compiled a second time (`node
 * --trace-protector-invalidation --trace-deopt`). Detaching first makes the
 * first compile the one that lasts; the code is what the second compile
 * gave anyway (with the checks).
 */

let done = false;

export function detachOnce(): void {
  if (done) return;
  done = true;
  const spent = new ArrayBuffer(0);
  structuredClone(spent, { transfer: [spent] });
}
