/**
 * Test helpers for API tests on a real server: a real TraceLibrary on a
 * temporary data directory, listening on a free port, plus raw-HTTP helpers
 * (cut-off bodies, SSE following, waiting for jobs). Not a test file itself.
 */
import { createHash } from 'node:crypto';
import { afterEach } from 'vitest';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { TraceLibrary } from '../../../server/ingest/library.ts';
import { createServer, type ServerOptions, type StallscopeServer } from '../../../server/api/create_server.ts';
import type { LibraryLike } from '../../../server/api/library_contract.ts';

export const FIXTURES = path.resolve(__dirname, '../../../fixtures');

export interface RealServer {
  dataDir: string;
  library: TraceLibrary;
  server: StallscopeServer;
  base: string;
  close(): Promise<void>;
}

export async function startRealServer(
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stallscope-api-real-')),
  opts: Partial<ServerOptions> = {},
): Promise<RealServer> {
  const library = await TraceLibrary.open(dataDir);
  const server = await createServer({
    library: library as unknown as LibraryLike,
    port: 0,
    appDir: path.join(dataDir, 'no-app'),
    ...opts,
  });
  const base = server.url.replace(/\/$/, '');
  return {
    dataDir,
    library,
    server,
    base,
    async close() {
      await server.close();
      await library.close();
    },
  };
}

export function sha256(file: string): string {
  return createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

/** Names in <dataDir>/tmp (staged uploads, work dirs). */
export function tmpEntries(dataDir: string): string[] {
  try {
    return fs.readdirSync(path.join(dataDir, 'tmp'));
  } catch {
    return [];
  }
}

export function traceDirs(dataDir: string): string[] {
  try {
    return fs.readdirSync(path.join(dataDir, 'traces'));
  } catch {
    return [];
  }
}

export async function until<T>(what: string, f: () => T | Promise<T>, timeoutMs = 20_000): Promise<NonNullable<T>> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await f();
    if (v) return v as NonNullable<T>;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export interface JobAnswer {
  jobId: string;
  phase: string;
  error?: string;
  traceId?: string;
  name: string;
  interrupted?: boolean;
}

export async function uploadFile(
  base: string,
  file: string,
  name = path.basename(file),
): Promise<{ status: number; body: { jobId?: string; error?: string } }> {
  const res = await fetch(`${base}/api/traces?name=${encodeURIComponent(name)}`, {
    method: 'POST',
    headers: { 'content-type': 'application/octet-stream' },
    body: fs.readFileSync(file),
  });
  return { status: res.status, body: (await res.json()) as { jobId?: string; error?: string } };
}

export async function waitJob(base: string, jobId: string, timeoutMs = 120_000): Promise<JobAnswer> {
  return until(
    `job ${jobId}`,
    async () => {
      const s = (await (await fetch(`${base}/api/jobs/${jobId}`)).json()) as JobAnswer;
      return s.phase === 'done' || s.phase === 'failed' ? s : null;
    },
    timeoutMs,
  );
}

export async function listTraces(
  base: string,
): Promise<{ traces: Array<{ id: string; name: string; status: string; error?: string }>; jobs: JobAnswer[] }> {
  return (await fetch(`${base}/api/traces`)).json() as never;
}

/**
 * Sends a raw POST whose Content-Length promises `declared` bytes but only
 * `send` bytes follow, then closes the connection (`how`: 'destroy' resets it,
 * 'end' half-closes it cleanly). Resolves with what the server answered, if anything.
 */
export function cutOffUpload(
  base: string,
  opts: {
    head: string;
    body: Buffer;
    declared: number;
    how: 'destroy' | 'end';
    beforeClose?: () => Promise<void>;
  },
): Promise<string> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const sock = net.connect(Number(u.port), u.hostname);
    let answer = '';
    sock.on('data', (d) => {
      answer += d.toString();
    });
    sock.on('error', () => resolve(answer));
    sock.on('close', () => resolve(answer));
    sock.on('connect', () => {
      sock.write(`${opts.head}Content-Length: ${opts.declared}\r\nConnection: close\r\n\r\n`);
      sock.write(opts.body, async () => {
        try {
          await opts.beforeClose?.();
        } catch (e) {
          reject(e);
        }
        if (opts.how === 'destroy') sock.resetAndDestroy();
        else sock.end();
      });
    });
  });
}

/** Follows a job's Server-Sent Events; `phases` are the distinct phases seen, in order. */
export function followJobEvents(
  base: string,
  jobId: string,
  onState?: (s: JobAnswer) => void,
): { phases: string[]; ended: Promise<JobAnswer | null>; stop(): void } {
  const phases: string[] = [];
  const ctl = new AbortController();
  const ended = (async () => {
    let last: JobAnswer | null = null;
    try {
      const res = await fetch(`${base}/api/jobs/${jobId}/events`, { signal: ctl.signal });
      const dec = new TextDecoder();
      let buf = '';
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buf += dec.decode(chunk, { stream: true });
        let i;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const msg = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const data = /^data: (.*)$/m.exec(msg)?.[1];
          if (!data) continue;
          last = JSON.parse(data) as JobAnswer;
          if (phases[phases.length - 1] !== last.phase) phases.push(last.phase);
          onState?.(last);
        }
      }
    } catch {
      // aborted, or the server went away
    }
    return last;
  })();
  return { phases, ended, stop: () => ctl.abort() };
}

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

const ROOT = path.resolve(__dirname, '../../..');

export interface ServerProcess {
  pid: number;
  base: string;
  output(): string;
  exited: Promise<number | null>;
}

/** `stallscope serve` as its own process (so it can be killed like a real one), ready when it prints its URL. */
export async function spawnServer(dataDir: string, port: number): Promise<ServerProcess> {
  const { spawn } = await import('node:child_process');
  const child = spawn(
    process.execPath,
    [path.join(ROOT, 'bin/stallscope.mjs'), 'serve', '--port', String(port), '--data-dir', dataDir],
    {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  child.stdout!.on('data', (d) => {
    out += d;
  });
  child.stderr!.on('data', (d) => {
    out += d;
  });
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  await until(
    'the server to start',
    () => {
      if (child.exitCode !== null) throw new Error(`server exited: ${out}`);
      return /is running at/.test(out);
    },
    60_000,
  );
  return { pid: child.pid!, base: `http://127.0.0.1:${port}`, output: () => out, exited };
}

/**
 * Spawned servers and data directories of one test file, torn down after
 * each test even when it failed halfway: servers killed by their PID
 * (SIGKILL; one already gone is fine), directories removed.
 */
export function spawnedServers(dirPrefix: string): {
  dataDir(): string;
  spawn(dataDir: string, port: number): Promise<ServerProcess>;
} {
  const started: ServerProcess[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    for (const p of started.splice(0)) {
      try {
        process.kill(p.pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
      await p.exited;
    }
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });
  return {
    dataDir() {
      const d = fs.mkdtempSync(path.join(os.tmpdir(), dirPrefix));
      dirs.push(d);
      return d;
    },
    async spawn(dataDir, port) {
      const p = await spawnServer(dataDir, port);
      started.push(p);
      return p;
    },
  };
}

export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * One HTTP request with the request-target sent exactly as given (no URL
 * normalisation: `/%61pi/..`, `//api`, `/x/../api` reach the server as written)
 * and the Host header as given.
 */
export function rawRequest(
  base: string,
  method: string,
  target: string,
  headers: Record<string, string> = {},
  body?: string | Buffer,
): Promise<RawAnswer> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: u.hostname,
        port: Number(u.port),
        method,
        path: target,
        setHost: false,
        headers: { host: u.host, ...headers },
      },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (d: Buffer) => parts.push(d));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(parts).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
