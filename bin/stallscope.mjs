#!/usr/bin/env -S MALLOC_TRIM_THRESHOLD_=0 node
// The shebang sets glibc's trim threshold (read once, at the process's first
// allocation, so it cannot be set from here): freed buffers at the top of the
// heap go back to the OS at once, and setting it also keeps glibc from raising
// its mmap threshold each time a large buffer (the decoders' chunks, 1-4 MiB)
// is freed, after which later freed buffers stayed resident: 15-35 MB of the
// ingest's peak RSS (sched_wq.v7 313-315 -> 289-293 MB, many_systems.v7
// 332 -> 310-313; CPU within the noise; bench/README.md, issue 29). `node
// bin/stallscope.mjs` runs without it; `npm start`, the bench and the
// desktop shell set it as this line does.
// Runs the CLI (server/cli.ts) as plain JavaScript: a bundle of server/, shared/ and
// its packages, made by esbuild on the first run after any source changed
// and reused by every later run. Starting through tsx's loader instead
// compiled ~200 TypeScript modules and loaded ~600 package files at every
// start: `stallscope --help` 0.8-1.0 s against 0.35-0.45 s, on a loaded
// 2-CPU VM (bench/README.md, "Twentieth session"). If esbuild cannot run,
// tsx's loader runs the TypeScript as before.
//
// The bundle is named by its inputs (path, size and mtime of every server
// source, package versions), in node_modules/.cache/stallscope/ (else a
// directory of this user's own in the OS temp dir: cacheDir), so concurrent
// processes and versions never share one.
// Modules keep their own file's URL as import.meta.url (they find queries/,
// the app and their .wasm beside their source), and packages that load
// files beside themselves or hold native code stay outside, imported from
// node_modules by absolute path.
import { buildCliBundle } from './cli_bundle.mjs';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const requireHere = createRequire(import.meta.url);

/**
 * `dir`'s TypeScript sources (not tests), each as a line `path size mtime`
 * (path from ROOT). Walked by hand: readdirSync's recursive listing and a
 * path.join + path.relative per file cost 21-33 CPU ms of every command's
 * start for ~200 files, this 6-7 (bench/README.md, "fixed costs of a small
 * import").
 */
function sourceLines(abs, rel, lines) {
  for (const e of fs.readdirSync(abs, { withFileTypes: true })) {
    if (e.isDirectory()) sourceLines(`${abs}/${e.name}`, `${rel}/${e.name}`, lines);
    else if (e.name.endsWith('.ts') && !e.name.endsWith('.test.ts')) {
      const st = fs.statSync(`${abs}/${e.name}`);
      lines.push(`${rel}/${e.name}\0${st.size}\0${st.mtimeMs}\n`);
    }
  }
  return lines;
}

function stamp() {
  const hash = createHash('sha256');
  // server/ and shared/ (the wire contract and the link codec the server imports).
  const lines = [];
  for (const dir of ['server', 'shared']) sourceLines(path.join(ROOT, dir), dir, lines);
  hash.update(lines.sort().join(''));
  hash.update(`${process.version}\n${fs.statSync(fileURLToPath(import.meta.url)).mtimeMs}\n`);
  hash.update(`${fs.statSync(new URL('./cli_bundle.mjs', import.meta.url)).mtimeMs}\n`);
  for (const pkg of ['@duckdb/node-api', 'esbuild', 'fastify', 'tsx']) {
    try {
      hash.update(`${pkg}@${requireHere(`${pkg}/package.json`).version}\n`);
    } catch {
      hash.update(`${pkg}@none\n`);
    }
  }
  return hash.digest('hex').slice(0, 16);
}

/**
 * Where the bundle is kept: a directory only this user can write into (a
 * real directory, owned by us, no group or other write), since the bundle
 * is code we run and its name is a hash anyone can work out; the OS temp dir
 * itself would let another user place it first. The same rule as
 * server/ingest/private_cache_dir.ts, written again here because this file
 * runs before any TypeScript can be loaded.
 */
function cacheDir() {
  const uid = typeof process.getuid === 'function' ? process.getuid() : null;
  for (const dir of [
    path.join(ROOT, 'node_modules', '.cache', 'stallscope'),
    path.join(os.tmpdir(), uid === null ? 'stallscope-cli' : `stallscope-cli-${uid}`),
  ]) {
    try {
      fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    } catch {
      // cannot be made: the check below refuses it
    }
    try {
      const st = fs.lstatSync(dir);
      if (!st.isDirectory() || (uid !== null && st.uid !== uid) || (st.mode & 0o022) !== 0) continue;
      fs.accessSync(dir, fs.constants.W_OK);
      return dir;
    } catch {
      // missing or read-only: try the next
    }
  }
  return null;
}

/** The bundle's entry file, built now if missing. */
async function bundle() {
  const dir = cacheDir();
  if (dir === null) throw new Error('no writable cache directory');
  const out = path.join(dir, `cli-${stamp()}`);
  const entry = path.join(out, 'cli.js');
  if (fs.existsSync(entry)) return entry;
  const tmp = `${out}.${process.pid}.tmp`;
  await buildCliBundle(tmp, { portable: false });
  try {
    fs.renameSync(tmp, out);
  } catch {
    // another process made the same bundle first
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  return entry;
}

// An installed package (no .git beside it) runs the prepared dist/cli/ (`npm run build`, prepack),
// never esbuild or a TypeScript compiler. A checkout keeps the cache above, so an edited
// source is never shadowed by a stale dist/.
const PREPARED = path.join(ROOT, 'dist', 'cli', 'cli.js');
let entry = null;
if (process.env.STALLSCOPE_CLI_TSX !== '1' && !fs.existsSync(path.join(ROOT, '.git')) && fs.existsSync(PREPARED)) {
  entry = PREPARED;
} else if (process.env.STALLSCOPE_CLI_TSX !== '1') {
  try {
    entry = await bundle();
  } catch (err) {
    process.stderr.write(`stallscope: running the TypeScript sources (no bundle: ${err?.message ?? err})\n`);
  }
}
if (entry !== null) {
  await import(pathToFileURL(entry).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../server/cli.ts');
}
