/**
 * Loads a committed .wasm of this directory. Null where WebAssembly or the
 * file is unavailable: its callers then do the work in JavaScript, as before
 * the native code (slower, same rows).
 *
 * The file is found beside this source, also from the field worker's bundle
 * in the temp dir (worker_bundle.ts keeps import.meta.url pointing here).
 */
import fs from 'node:fs';

export function loadNativeModule(file: string): WebAssembly.Module | null {
  try {
    return new WebAssembly.Module(fs.readFileSync(new URL(`./${file}`, import.meta.url)));
  } catch {
    return null;
  }
}
