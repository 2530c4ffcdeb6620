/**
 * The store worker (store_worker.ts) as one plain JavaScript file.
 *
 * Why: the server runs TypeScript through tsx's loader, and a worker thread
 * started from TypeScript must register that loader again and send each of
 * its imports through the loader's hooks thread: 0.5-1 s before the worker
 * is ready, measured on a 2-CPU VM. esbuild (already here as tsx's compiler)
 * bundles the worker into one file in ~50 ms, once per process; node loads
 * that file without any loader. DuckDB's packages (a native addon) stay
 * outside the bundle, imported by absolute path.
 *
 * The bundle is written to the OS temp dir under a name derived from its
 * inputs (inputStamp), so concurrent processes and versions never overwrite
 * each other's, and later processes reuse it.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const WORKER_SOURCE = fileURLToPath(new URL('./store_worker.ts', import.meta.url));
const requireHere = createRequire(import.meta.url);

let bundled: Promise<string> | null = null;

/** Path of the bundled store worker (built on first call, then reused). */
export function storeWorkerBundle(): Promise<string> {
  bundled ??= buildBundle().catch((err: unknown) => {
    bundled = null; // let a later ingest try again
    throw err;
  });
  return bundled;
}

async function buildBundle(): Promise<string> {
  // Named by its inputs, so a later process finds it without running
  // esbuild (~0.2 s before every ingest could start).
  const file = path.join(os.tmpdir(), `stallscope-store-worker-${await inputStamp()}.mjs`);
  try {
    await fs.access(file);
    return file;
  } catch {
    // not built yet
  }
  const esbuild = await import('esbuild');
  const result = await esbuild.build({
    entryPoints: [WORKER_SOURCE],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    write: false,
    logLevel: 'silent',
    plugins: [
      {
        name: 'duckdb-by-absolute-path',
        setup(build) {
          // The bundle lives in the temp dir, where `@duckdb/...` would not resolve.
          build.onResolve({ filter: /^@duckdb\/node-bindings$/ }, (args) => ({
            path: requireHere.resolve(args.path),
            external: true,
          }));
        },
      },
    ],
    // Some bundled CommonJS packages call require() on node builtins.
    banner: { js: "import { createRequire as __stallscopeRequire } from 'node:module'; const require = __stallscopeRequire(import.meta.url);" },
  });
  const tmp = `${file}.${process.pid}.tmp`;
  await fs.writeFile(tmp, result.outputFiles[0].contents);
  await fs.rename(tmp, file);
  return file;
}

/**
 * What the bundle is made of, without reading it: path, size and mtime of
 * every server source, where the native binding is, and the versions of
 * the bundled packages.
 */
async function inputStamp(): Promise<string> {
  const serverDir = path.resolve(path.dirname(WORKER_SOURCE), '..');
  const hash = createHash('sha256');
  const sources = (await fs.readdir(serverDir, { recursive: true })).filter((f) => f.endsWith('.ts')).sort();
  for (const f of sources) {
    const st = await fs.stat(path.join(serverDir, f));
    hash.update(`${f}\0${st.size}\0${st.mtimeMs}\n`);
  }
  hash.update(requireHere.resolve('@duckdb/node-bindings'));
  for (const pkg of ['@duckdb/node-api', 'esbuild']) {
    hash.update(`${pkg}@${(requireHere(`${pkg}/package.json`) as { version: string }).version}\n`);
  }
  return hash.digest('hex').slice(0, 16);
}
