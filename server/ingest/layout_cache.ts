/**
 * The tables' layout (model_layout.ts) remembered between ingests, so the
 * main thread can start decoding while the store worker is still starting.
 *
 * Why: the layout comes from creating the schema in DuckDB on the store
 * worker, which is ready 250-300 ms after it starts (thread, bundle, native
 * library, schema); the main thread waited for it before decoding its first
 * event. It depends only on the ingest's code and schema.sql, so it is kept
 * in this user's private cache directory (private_cache_dir.ts) under their
 * stamp (worker_bundle.ts inputStamp), and the store worker checks the
 * layout it builds against the one used.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import type { ModelLayout } from '../model/model_layout.ts';
import { privateCacheDir } from './private_cache_dir.ts';
import { inputStamp } from './worker_bundle.ts';

/** Null: no private cache directory, so no cache. */
async function cacheFile(): Promise<string | null> {
  const dir = privateCacheDir();
  return dir === null ? null : path.join(dir, `layout-${await inputStamp()}.json`);
}

/** The layout of an earlier ingest by the same code, or null. */
export async function cachedLayout(): Promise<ModelLayout | null> {
  try {
    const file = await cacheFile();
    return file === null ? null : (JSON.parse(await fs.readFile(file, 'utf8')) as ModelLayout);
  } catch {
    return null;
  }
}

/** Remembers the layout the store worker built (best effort: a failure only costs the next ingest the wait). */
export async function rememberLayout(layout: ModelLayout): Promise<void> {
  try {
    const file = await cacheFile();
    if (file === null) return;
    const tmp = `${file}.${process.pid}.tmp`;
    await fs.writeFile(tmp, JSON.stringify(layout));
    await fs.rename(tmp, file);
  } catch {
    // not writable now: no cache
  }
}
