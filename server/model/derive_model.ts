/**
 * Runs the SQL in queries/model/ that derives tables from decoded events
 * (sched_slice, thread_state, slice, counter, flow), in dependency order.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Engine } from '../engine/engine.ts';

const MODEL_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../queries/model');

/** Order matters: later files read tables the earlier ones fill. */
export const DERIVE_STEPS = ['derive_sched.sql', 'derive_slices.sql', 'derive_block.sql'] as const;

export async function deriveModel(engine: Engine, onStep?: (step: string) => void): Promise<Record<string, number>> {
  const timings: Record<string, number> = {};
  for (const step of DERIVE_STEPS) {
    const file = path.join(MODEL_DIR, step);
    if (!fs.existsSync(file)) continue;
    const started = performance.now();
    try {
      await engine.exec(fs.readFileSync(file, 'utf8'));
    } catch (err) {
      throw new Error(`queries/model/${step}: ${(err as Error).message}`, { cause: err });
    }
    timings[step] = performance.now() - started;
    onStep?.(step);
  }
  return timings;
}
