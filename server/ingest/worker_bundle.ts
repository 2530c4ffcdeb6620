/**
 * The ingest's worker threads (store_worker.ts, field_worker.ts) as plain
 * JavaScript files, one per worker.
 *
 * Why: the server runs TypeScript through tsx's loader, and a worker thread
 * started from TypeScript must register that loader again and send each of
 * its imports through the loader's hooks thread: 0.5-1 s before the worker
 * is ready, measured on a 2-CPU VM. esbuild (already here as tsx's compiler)
 * bundles the worker into one file in ~50 ms, once per process; node loads
 * that file without any loader. DuckDB's packages (a native addon) stay
 * outside the bundle, imported by absolute path.
 *
 * The bundle is written to this user's private cache directory
 * (private_cache_dir.ts: never a file anyone else could have placed, since
 * it is code we run) under a name derived from its inputs (inputStamp), so
 * concurrent processes and versions never overwrite each other's, and later
 * processes reuse it. Without such a directory, each process builds its own
 * in a fresh directory of its own, removed when it exits.
 */
import { createHash } from 'node:crypto';
import fsSync from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { privateCacheDir } from './private_cache_dir.ts';

export type WorkerName = 'store_worker' | 'field_worker';

const SERVER_DIR = fileURLToPath(new URL('..', import.meta.url));
const requireHere = createRequire(import.meta.url);

const bundled = new Map<WorkerName, Promise<string>>();

/** Path of a bundled worker (built on first call, then reused). */
export function workerBundle(name: WorkerName): Promise<string> {
  let b = bundled.get(name);
  if (!b) {
    b = buildBundle(name).catch((err: unknown) => {
      bundled.delete(name); // let a later ingest try again
      throw err;
    });
    bundled.set(name, b);
  }
  return b;
}

/**
 * Where a worker's code is: its bundle, or if esbuild cannot run, its
 * TypeScript entry behind a small .mjs that registers tsx's loader (a
 * worker does not inherit the parent's).
 */
export async function workerEntry(name: WorkerName): Promise<string | URL> {
  // The desktop package's server is bundled ahead of time, its workers beside
  // it as ./<name>.mjs (desktop/scripts/bundle_server.mjs defines this).
  if (process.env.STALLSCOPE_PREBUILT_WORKERS === '1') return new URL(`./${name}.mjs`, import.meta.url);
  return workerBundle(name).catch(() => new URL(`./${name}.mjs`, import.meta.url));
}

async function buildBundle(name: WorkerName): Promise<string> {
  // Named by its inputs, so a later process finds it without running
  // esbuild (~0.2 s before every ingest could start).
  const dir = privateCacheDir() ?? (await processBundleDir());
  const file = path.join(dir, `${name.replace('_', '-')}-${await inputStamp()}.mjs`);
  try {
    await fs.access(file);
    return file; // built by an earlier process (a fresh directory never has it)
  } catch {
    // not built yet
  }
  const esbuild = await import('esbuild');
  const result = await esbuild.build({
    entryPoints: [path.join(SERVER_DIR, 'ingest', `${name}.ts`)],
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
      {
        name: 'native-code-beside-its-source',
        setup(build) {
          // The loaders of native code (decode/ftrace_text/native/*.ts) read
          // their .wasm next to themselves: in the bundle (in the temp dir)
          // import.meta.url must still name the source file.
          build.onLoad({ filter: /[\\/]native[\\/][^\\/]+\.ts$/ }, async (args) => ({
            contents: (await fs.readFile(args.path, 'utf8')).replaceAll(
              'import.meta.url',
              JSON.stringify(pathToFileURL(args.path).href),
            ),
            loader: 'ts',
          }));
        },
      },
    ],
    // Some bundled CommonJS packages call require() on node builtins.
    banner: { js: REQUIRE_BANNER },
  });
  const tmp = `${file}.${process.pid}.tmp`;
  await fs.writeFile(tmp, result.outputFiles[0].contents);
  await fs.rename(tmp, file);
  return file;
}

let ownDir: Promise<string> | null = null;
/**
 * Without a private cache directory: one fresh directory for this process's
 * bundles, removed when the process exits (its bundles are never reused, so
 * leaving them would fill the temp dir with one directory per run).
 */
function processBundleDir(): Promise<string> {
  ownDir ??= fs.mkdtemp(path.join(os.tmpdir(), 'stallscope-bundle-')).then((dir) => {
    process.once('exit', () => fsSync.rmSync(dir, { recursive: true, force: true }));
    return dir;
  });
  return ownDir;
}

/**
 * Lets bundled CommonJS packages call require() on node builtins. Spelled
 * in two parts: a bundler that rewrites the expression in sources (bin's
 * CLI bundle names each module's own file) must leave this text alone.
 */
export const REQUIRE_BANNER = `import { createRequire as __stallscopeRequire } from 'node:module'; const require = __stallscopeRequire(${'import.meta'}.url);`;

let stamp: Promise<string> | null = null;
/** Names what the ingest's code is made of (sources, schema, packages): a cache of anything derived from it keys on this. */
export function inputStamp(): Promise<string> {
  stamp ??= computeInputStamp();
  return stamp;
}

/**
 * The TypeScript sources under `abs` (not tests), a line `path size mtime`
 * each (path from SERVER_DIR). Walked by hand: Node 20's recursive
 * readdirSync and a path.join per file cost 15-35 CPU ms of every ingest's
 * workspace for ~200 files, this 5-9 (inputStamp alone, 3 alternating runs;
 * as bin/stallscope.mjs's stamp).
 */
function sourceLines(abs: string, rel: string, lines: string[]): string[] {
  for (const e of fsSync.readdirSync(abs, { withFileTypes: true })) {
    const name = rel === '' ? e.name : `${rel}/${e.name}`;
    if (e.isDirectory()) sourceLines(`${abs}/${e.name}`, name, lines);
    else if (e.name.endsWith('.ts') && !e.name.endsWith('.test.ts')) {
      const st = fsSync.statSync(`${abs}/${e.name}`);
      lines.push(`${name}\0${st.size}\0${st.mtimeMs}\n`);
    }
  }
  return lines;
}

/**
 * What the bundles are made of, without reading them: path, size and mtime
 * of every server source (tests are in no bundle) and of
 * queries/schema.sql, where the native binding is, and the versions of the
 * bundled packages. Synchronous: ~200 stats one after the other through
 * libuv's pool took 20-40 ms wall of a fresh ingest's start (its workspace
 * waits for the stamp), against a few ms here, once per process.
 */
async function computeInputStamp(): Promise<string> {
  const hash = createHash('sha256');
  hash.update(sourceLines(path.resolve(SERVER_DIR), '', []).sort().join(''));
  const schema = path.join(SERVER_DIR, '..', 'queries', 'schema.sql');
  const st = fsSync.statSync(schema);
  hash.update(`schema.sql\0${st.size}\0${st.mtimeMs}\n`);
  hash.update(requireHere.resolve('@duckdb/node-bindings'));
  for (const pkg of ['@duckdb/node-api', 'esbuild']) {
    hash.update(`${pkg}@${(requireHere(`${pkg}/package.json`) as { version: string }).version}\n`);
  }
  return hash.digest('hex').slice(0, 16);
}
