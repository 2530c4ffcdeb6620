/**
 * The bundled field worker finds its native code: the bundle lives in the
 * temp dir, and a native loader that looked for its .wasm beside the bundle
 * would not find it and fall back to JavaScript silently (correct, slower).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect, it } from 'vitest';
import { workerBundle } from './worker_bundle.ts';

it('the field worker bundle loads scan_kv.wasm from beside its source, not from the temp dir', async () => {
  const bundle = readFileSync(await workerBundle('field_worker'), 'utf8');
  const source = pathToFileURL(join(import.meta.dirname, '../decode/ftrace_text/native/native_kv_scanner.ts')).href;
  expect(bundle).toContain(JSON.stringify(source));
  // the loader's own URL is the only way it names where it is
  const loader = bundle.slice(bundle.indexOf('scan_kv.wasm') - 200, bundle.indexOf('scan_kv.wasm') + 200);
  expect(loader).not.toContain('import.meta.url');
  expect(loader).toContain(source);
});
