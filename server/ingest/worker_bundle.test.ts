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

it('the field worker bundle loads its .wasm from beside the native sources, not from the temp dir', async () => {
  const bundle = readFileSync(await workerBundle('field_worker'), 'utf8');
  const loader = pathToFileURL(join(import.meta.dirname, '../decode/ftrace_text/native/load_wasm.ts')).href;
  const body = bundle.slice(
    bundle.indexOf('function loadNativeModule('),
    bundle.indexOf('function loadNativeModule(') + 300,
  );
  expect(body).toContain('new URL(');
  expect(body).toContain(JSON.stringify(loader));
  expect(body).not.toContain('import.meta.url');
  expect(bundle).toContain('scan_kv.wasm');
});
