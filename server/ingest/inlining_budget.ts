/**
 * A smaller inlining budget for V8's optimizing compiler while ingesting.
 *
 * Why: on a 1M-event trace.dat, TurboFan's background compile jobs took
 * ~550 ms of CPU (perf, sched_wq.v7: 17% of the ingest's samples on V8's
 * platform threads, in compiler::), as much as the main thread's whole
 * decode. They compile the decoders' generated readers (event_decoder.ts
 * direct/shaped, one per event format) and the merge and row writers,
 * several of them more than once, each inlining its callees up to V8's
 * cumulative budget of 920 bytes of bytecode. On two cores those jobs take
 * CPU from the three decoding threads, so the decode phase is bound by the
 * process's CPU, not by one thread's waits (issue-29pl note). Halving the
 * budget saves more compile CPU than the less-inlined code loses.
 * Decode phase wall/CPU ms, medians (ranges), STALLSCOPE_TIMING=1 CLI,
 * alternating runs at load 1.0-2.3:
 *   sched_wq.v7        725/1287 (683-775/1215-1343) -> 669/1151 (618-707/1086-1208)
 *   many_systems.v7    827/1460 (820-833/1459-1495) -> 747/1331 (718-785/1262-1435)
 *   compile_syscalls.v7 (3.2M events) 2519/4401 (2448-2664/4245-4621) -> 2428/4236 (2328-2612/4098-4576)
 *   sched_wq.tracefs.txt 1110/2086 (1088-1142/2012-2125) -> 1077/1980 (1018-1145/1965-2032)
 * 230 did as well on the 1M-event files, but 5 of 13 compile_syscalls.v7
 * decodes took 4.8-5.5 CPU-s with it (460: 4.1-4.6 in 10).
 *
 * The flag is process-wide (every isolate, the workers' too) and applies
 * to compile jobs that start after it is set; set once, at the first
 * ingest. $STALLSCOPE_INLINING_BUDGET overrides (920: V8's default).
 */
import { setFlagsFromString } from 'node:v8';

export const INLINING_BUDGET = Number(process.env.STALLSCOPE_INLINING_BUDGET) || 460;

let applied = false;

export function limitInlining(): void {
  if (applied) return;
  applied = true;
  setFlagsFromString(`--max-inlined-bytecode-size-cumulative=${INLINING_BUDGET}`);
}
