/**
 * An empty model database (schema.sql and the typed tables' storage,
 * committed) kept between ingests, copied as the start of a load's database
 * file instead of creating the schema in it.
 *
 * Why: creating the schema is a fixed cost of every ingest, however small
 * the trace: schema.sql's ~50 tables, ~45 views and macros, then the typed
 * tables dropped and created again as `_stage_` storage (model_store.ts
 * createTypedStorage), 40-65 CPU ms of a 1.2 MB Perfetto file's ~1.1 CPU-s
 * ingest, and its COMMIT writing the new catalog. Opening a copy of the
 * committed schema takes 26-36 (bench/README.md, "fixed costs of a small
 * import"). Like the layout cache (layout_cache.ts), it depends only on the
 * ingest's code and schema.sql, so it is kept in this user's private cache
 * directory (private_cache_dir.ts: a template someone else placed would shape
 * the model) under their stamp (worker_bundle.ts inputStamp), one per block
 * size (a database file's block size is fixed when it is made). The layout a load on it uses is the
 * layout cache's, made by the same code.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { openDuckDb } from '../engine/engine.ts';
import { ModelStore } from '../model/model_store.ts';
import { privateCacheDir } from './private_cache_dir.ts';
import { inputStamp } from './worker_bundle.ts';

/** Null: no private cache directory, so no template. */
async function templateFile(blockSize: number | undefined): Promise<string | null> {
  const dir = privateCacheDir();
  return dir === null ? null : path.join(dir, `schema-${await inputStamp()}-${blockSize ?? 'default'}.duckdb`);
}

/** Copies the template to `dbPath` (which must not exist); false when there is none yet. */
export async function copySchemaTemplate(dbPath: string, blockSize: number | undefined): Promise<boolean> {
  const template = await templateFile(blockSize);
  if (template === null) return false;
  try {
    await fs.copyFile(template, dbPath, fs.constants.COPYFILE_EXCL);
    return true;
  } catch {
    await fs.rm(dbPath, { force: true }); // a partial copy must not be opened
    return false;
  }
}

/** Block sizes this process tried to make a template for: a failure is not retried at every ingest. */
const tried = new Set<number | undefined>();

/**
 * Makes the template for `blockSize` (best effort: without one, the next
 * ingest creates the schema itself). 50-100 ms, once per code version and
 * block size.
 */
export async function makeSchemaTemplate(blockSize: number | undefined): Promise<void> {
  if (tried.has(blockSize)) return;
  tried.add(blockSize);
  let tmp: string | null = null;
  try {
    const file = await templateFile(blockSize);
    if (file === null) return;
    tmp = `${file}.${process.pid}.tmp`;
    await fs.rm(tmp, { force: true });
    const engine = await openDuckDb(tmp, { threads: 1, blockSize });
    try {
      await ModelStore.beginLoad(engine);
      await engine.exec('COMMIT');
      await engine.exec('CHECKPOINT');
    } finally {
      engine.close();
    }
    await fs.rm(`${tmp}.wal`, { force: true });
    await fs.rename(tmp, file);
  } catch {
    // not writable now, or another process's rename won: no template from this one
    if (tmp !== null) await fs.rm(tmp, { force: true }).catch(() => undefined);
  }
}
