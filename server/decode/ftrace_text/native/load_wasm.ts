/**
 * Loads a committed .wasm of this directory. Null where WebAssembly or the
 * file is unavailable: its callers then do the work in JavaScript, as before
 * the native code (slower, same rows). That is said once per module and
 * thread as a process warning (code STALLSCOPE_NO_NATIVE, on stderr), so a
 * broken install is not merely slow without saying why.
 *
 * The file is found beside this source, also from the field worker's bundle
 * in the temp dir (worker_bundle.ts keeps import.meta.url pointing here).
 */
import fs from 'node:fs';

export const NO_NATIVE_WARNING = 'STALLSCOPE_NO_NATIVE';

const warned = new Set<string>();

export function loadNativeModule(file: string): WebAssembly.Module | null {
  const url = new URL(`./${file}`, import.meta.url);
  try {
    return new WebAssembly.Module(fs.readFileSync(url));
  } catch (err) {
    if (!warned.has(file)) {
      warned.add(file);
      process.emitWarning(`native text reader ${file} not loaded (${(err as Error).message}): text is read in JavaScript instead, the same rows, slower`, {
        code: NO_NATIVE_WARNING,
      });
    }
    return null;
  }
}
