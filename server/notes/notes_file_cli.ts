/**
 * The notes file from the command line (`stallscope export FILE --format
 * notes`, `stallscope import-notes FILE NOTES`): the trace is ingested into
 * the data directory if needed, then the server's own routes
 * (server/api/routes/annotations.ts) do the work, in process, so the file's
 * checks, anchoring and merge are the app's to the letter. Like `export`, not
 * for a data directory a running server is writing notes to.
 */
import { readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { buildApi } from '../api/create_server.ts';
import { resolveDataDir } from '../ingest/data_dir.ts';
import { TraceLibrary } from '../ingest/library.ts';
import { ANNOTATIONS_MAX_BYTES } from '../../shared/links/annotations_file.ts';
import type { FastifyInstance } from 'fastify';

async function withTrace<T>(
  file: string,
  dataDir: string | undefined,
  fn: (app: FastifyInstance, id: string) => Promise<T>,
): Promise<T> {
  const library = await TraceLibrary.open(resolveDataDir(dataDir));
  try {
    const rec = await library.ingest(file, { name: path.basename(file) });
    if (rec.status !== 'ready') throw new Error(`${file}: ${rec.error ?? 'could not be ingested'}`);
    const { app } = await buildApi({ library, appDir: path.join(library.paths?.root ?? '.', 'no-app') });
    try {
      return await fn(app, rec.id);
    } finally {
      await app.close();
    }
  } finally {
    await library.close();
  }
}

export async function exportNotesFile(
  file: string,
  opts: { dataDir?: string; output?: string },
): Promise<{ path: string; notes: number; name: string }> {
  return withTrace(file, opts.dataDir, async (app, id) => {
    const r = await app.inject({ url: `/api/traces/${id}/annotations` });
    if (r.statusCode !== 200) throw new Error(r.json().error ?? `HTTP ${r.statusCode}`);
    const name =
      /filename="([^"]+)"/.exec(String(r.headers['content-disposition']))?.[1] ?? 'trace.stallscope-notes.json';
    const out = opts.output ?? name;
    await writeFile(out, r.body);
    const doc = r.json() as { notes: unknown[]; trace: { name: string } };
    return { path: out, notes: doc.notes.length, name: doc.trace.name };
  });
}

export type ImportResult =
  | {
      ok: true;
      answer: {
        added: number;
        existing: number;
        reanchored: Array<{ id: string; reason: string }>;
        skipped: Array<{ id: string; reason: string }>;
      };
    }
  | { ok: false; error: string };

export async function importNotesFile(
  file: string,
  notesPath: string,
  opts: { dataDir?: string },
): Promise<ImportResult> {
  const size = (await stat(notesPath)).size;
  if (size > ANNOTATIONS_MAX_BYTES)
    return { ok: false, error: `too large for a notes file (${size} bytes, at most ${ANNOTATIONS_MAX_BYTES})` };
  const text = await readFile(notesPath, 'utf8');
  return withTrace(file, opts.dataDir, async (app, id) => {
    const r = await app.inject({
      method: 'POST',
      url: `/api/traces/${id}/annotations`,
      headers: { 'content-type': 'application/json' },
      payload: text,
    });
    if (r.statusCode !== 200)
      return { ok: false, error: (r.json() as { error?: string }).error ?? `HTTP ${r.statusCode}` };
    return { ok: true, answer: r.json() };
  });
}
