/**
 * Development/test entry until bin/stallscope.mjs serve exists:
 *   npx tsx server/api/dev_server.ts --port 7431 --data-dir /tmp/x [--stub] [--synthetic N]
 * Uses the real TraceLibrary when server/ingest/library.ts exists, else the stub.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createServer } from './create_server.ts';
import type { LibraryLike } from './library_contract.ts';

const args = process.argv.slice(2);
const opt = (name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const port = Number(opt('--port') ?? 7420);
const dataDir = opt('--data-dir') ?? '.stallscope-data';
const realPath = fileURLToPath(new URL('../ingest/library.ts', import.meta.url));

let library: LibraryLike;
if (!args.includes('--stub') && existsSync(realPath)) {
  const mod = (await import(realPath)) as { TraceLibrary: { open(dir: string): LibraryLike | Promise<LibraryLike> } };
  library = await mod.TraceLibrary.open(dataDir);
} else {
  const { StubTraceLibrary } = await import('./library_stub.ts');
  library = StubTraceLibrary.open(dataDir);
}
const server = await createServer({ library, port, dataDir });
console.log(`stallscope listening on ${server.url}`);
const stop = () => void server.close().then(() => process.exit(0));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
