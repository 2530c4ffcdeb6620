/**
 * A native module that cannot be loaded falls back to JavaScript, and says
 * so once (a process warning), so a broken install is visible.
 */
import { afterEach, expect, it } from 'vitest';
import { loadNativeModule, NO_NATIVE_WARNING } from './load_wasm.ts';

const warnings: Error[] = [];
const onWarning = (w: Error) => warnings.push(w);
process.on('warning', onWarning);
afterEach(() => {
  warnings.length = 0;
});

/** process.emitWarning delivers on the next tick. */
const nextTick = () => new Promise((r) => setImmediate(r));

it('the committed modules load, without a warning', async () => {
  expect(loadNativeModule('frame_lines.wasm')).toBeInstanceOf(WebAssembly.Module);
  expect(loadNativeModule('scan_kv.wasm')).toBeInstanceOf(WebAssembly.Module);
  await nextTick();
  expect(warnings).toEqual([]);
});

it('a missing module: null, and one warning naming it, however often it is asked for', async () => {
  expect(loadNativeModule('missing_for_test.wasm')).toBeNull();
  expect(loadNativeModule('missing_for_test.wasm')).toBeNull();
  await nextTick();
  expect(warnings.map((w) => [(w as Error & { code?: string }).code, w.message])).toEqual([
    [NO_NATIVE_WARNING, expect.stringMatching(/^native text reader missing_for_test\.wasm not loaded \(ENOENT.*\): text is read in JavaScript instead/)],
  ]);
  process.off('warning', onWarning);
});
