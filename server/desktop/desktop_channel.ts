/**
 * `stallscope serve --desktop`: the server a desktop window (desktop/) starts
 * for itself. It talks to that one parent over its stdin and stdout, one
 * JSON object a line, and to nobody else:
 *
 *   shell -> server, first line   {"token":"<hex>"}   this launch's access token
 *   server -> shell               {"ready":{"url":"http://127.0.0.1:<port>/"}}
 *   shell -> server               {"open":{"id":1,"path":"/abs/trace.dat"}}
 *   server -> shell               {"opened":{"id":1,"jobId":"<uuid>","name":"trace.dat"}}
 *                                 {"opened":{"id":1,"error":"<why>"}}
 *
 * Why a pipe: the token never appears in argv (which every user on the
 * machine can read in /proc) or the environment, and reading a file by its
 * path is something only the parent can ask for. No HTTP route takes a
 * path, so no web page (nor the window's own page) can make the server
 * read one: the shell asks for a path the user chose (File > Open, a drop,
 * its command line) and the page follows the ingest job it gets back, like
 * an upload's.
 *
 * The server stops when its stdin ends: the window closed, or the shell
 * died (a crash or SIGKILL closes the pipe too), so no server is left
 * behind.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import readline from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import type { ApiContext } from '../api/context.ts';
import { runIngest } from '../api/routes/traces.ts';
import { displayName } from '../api/routes/traces.ts';

/**
 * What share links start with in the desktop app when no team server is set
 * (`--public-url`): `stallscope://open/?trace=<sha256>&...`, which the
 * desktop app opens (desktop/src-tauri/src/links.rs).
 */
export const DESKTOP_LINK_BASE = 'stallscope://open';

/** What the shell may send after the token. */
export type ShellMessage = { open: { id: number; path: string } };

export interface DesktopChannel {
  /** The first line's token (rejects if stdin ends or the line is malformed). */
  token: Promise<string>;
  /** Tells the shell where the server listens. */
  ready(url: string): void;
  /** Starts serving the shell's requests against the server's context. */
  serveRequests(ctx: ApiContext): void;
  /** Resolves when stdin ends (the parent is gone or closed the window). */
  closed: Promise<void>;
}

/** Longest line the shell may send (a path is at most PATH_MAX = 4096 bytes). */
const MAX_LINE = 16 * 1024;

export function openDesktopChannel(input: Readable = process.stdin, output: Writable = process.stdout): DesktopChannel {
  const rl = readline.createInterface({ input, crlfDelay: Infinity, terminal: false });
  let ctx: ApiContext | null = null;
  const early: string[] = [];
  let resolveToken!: (t: string) => void;
  let rejectToken!: (e: Error) => void;
  const token = new Promise<string>((res, rej) => {
    resolveToken = res;
    rejectToken = rej;
  });
  token.catch(() => undefined);
  let gotToken = false;
  const send = (msg: object) => {
    // A parent that is gone cannot read it: stdin's end stops us right after.
    if (output.writable) output.write(`${JSON.stringify(msg)}\n`);
  };
  const handle = (line: string) => {
    if (!ctx) {
      early.push(line);
      return;
    }
    let msg: Partial<ShellMessage>;
    try {
      msg = JSON.parse(line) as Partial<ShellMessage>;
    } catch {
      send({ error: `not JSON: ${line.slice(0, 80)}` });
      return;
    }
    if (msg.open && Number.isInteger(msg.open.id) && typeof msg.open.path === 'string') {
      void openPath(ctx, msg.open.path).then((r) => send({ opened: { id: msg.open!.id, ...r } }));
    } else {
      send({ error: `unknown request: ${line.slice(0, 80)}` });
    }
  };
  rl.on('line', (raw) => {
    const line = raw.trim();
    if (!line) return;
    if (line.length > MAX_LINE) {
      send({ error: `line of ${line.length} characters refused (at most ${MAX_LINE})` });
      return;
    }
    if (!gotToken) {
      gotToken = true;
      try {
        const t = (JSON.parse(line) as { token?: unknown }).token;
        if (typeof t !== 'string' || !/^[A-Za-z0-9_-]{32,256}$/.test(t)) throw new Error('bad token');
        resolveToken(t);
      } catch {
        rejectToken(
          new Error('serve --desktop: the first line on stdin must be {"token":"<32 to 256 letters, digits, - or _>"}'),
        );
      }
      return;
    }
    handle(line);
  });
  const closed = new Promise<void>((resolve) => {
    rl.once('close', () => {
      rejectToken(new Error('serve --desktop: stdin ended before the token arrived'));
      resolve();
    });
  });
  output.on('error', () => undefined); // EPIPE: the parent is gone; stdin's end stops the server
  return {
    token,
    ready: (url) => send({ ready: { url } }),
    serveRequests(c) {
      ctx = c;
      for (const l of early.splice(0)) handle(l);
    },
    closed,
  };
}

/** Starts ingesting a file the user chose; the page follows the job as it follows an upload's. */
export async function openPath(
  ctx: ApiContext,
  file: string,
): Promise<{ jobId: string; name: string } | { error: string }> {
  const name = displayName(path.basename(file));
  if (!path.isAbsolute(file)) return { error: `${name}: the desktop shell must name the file by its absolute path` };
  let size: number;
  try {
    const st = await stat(file);
    if (st.isDirectory())
      return {
        error: `${file} is a folder: open a trace file (trace.dat, trace-cmd report text, tracefs text, a Perfetto trace)`,
      };
    if (!st.isFile()) return { error: `${file} is not a regular file` };
    size = st.size;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : (e as Error).message;
    return { error: `cannot open ${file}: ${why}` };
  }
  if (size === 0) return { error: `${name} is empty` };
  const job = ctx.jobs.create(name, size);
  void runIngest(ctx, job.jobId, file, name, undefined, { staged: false });
  return { jobId: job.jobId, name };
}
