/**
 * A `stallscope serve` process of a test's own, on its own data directory
 * and port, for tests that kill or restart the server or look inside its
 * data directory (the shared webServer of playwright.config.ts is left alone).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test } from '@playwright/test';

export class ServerProcess {
  private child: ChildProcess | null = null;
  private out = '';
  readonly dataDir: string;

  /** `args`: more `serve` options (e.g. --token). */
  constructor(
    readonly port: number,
    dataDir?: string,
    private readonly args: string[] = [],
  ) {
    this.dataDir = dataDir ?? mkdtempSync(join(tmpdir(), 'stallscope-e2e-own-'));
  }

  get base(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  output(): string {
    return this.out;
  }

  async start(): Promise<void> {
    this.out = '';
    const child = spawn(
      process.execPath,
      [resolve('bin/stallscope.mjs'), 'serve', '--port', String(this.port), '--data-dir', this.dataDir, ...this.args],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    this.child = child;
    child.stdout!.on('data', (d) => {
      this.out += d;
    });
    child.stderr!.on('data', (d) => {
      this.out += d;
    });
    const end = Date.now() + 60_000;
    while (!/is running at/.test(this.out)) {
      if (child.exitCode !== null) throw new Error(`server exited: ${this.out}`);
      if (Date.now() > end) throw new Error(`server did not start: ${this.out}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Kills the process we started (by its PID) and waits for it to be gone. */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise((r) => child.once('exit', r));
    process.kill(child.pid!, signal);
    await gone;
  }

  /** Stops the server (SIGTERM) and removes its data directory. */
  async dispose(): Promise<void> {
    await this.kill('SIGTERM');
    rmSync(this.dataDir, { recursive: true, force: true });
  }

  /** Staged uploads and work directories in <dataDir>/tmp. */
  tmpEntries(): string[] {
    try {
      return readdirSync(join(this.dataDir, 'tmp'));
    } catch {
      return [];
    }
  }

  traceDirs(): string[] {
    try {
      return readdirSync(join(this.dataDir, 'traces'));
    } catch {
      return [];
    }
  }
}

export function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.on('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => res(port));
    });
  });
}

export function sha256(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

/**
 * A TCP proxy in front of a server that, when armed, lets an upload
 * (`POST /api/traces`) through up to `cutAfter` bytes of the request and then
 * resets both connections: what a dropped network does to a long upload,
 * seen by the real browser and the real server.
 */
export class CutOffProxy {
  private readonly server = createServer((client) => this.onConnection(client));
  /** Bytes of an upload request let through before the connection is cut (or held); null: all. */
  cutAfter: number | null = null;
  /** 'cut': reset both connections there; 'hold': pass nothing more (a stalled network) until the browser gives up. */
  mode: 'cut' | 'hold' = 'cut';
  /** Bytes each cut-off upload got through. */
  readonly cuts: number[] = [];

  constructor(private readonly target: number) {}

  async listen(): Promise<number> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    return (this.server.address() as { port: number }).port;
  }

  close(): Promise<void> {
    return new Promise((r) => this.server.close(() => r()));
  }

  private onConnection(client: Socket): void {
    const upstream = connect(this.target, '127.0.0.1');
    let uploadBytes = -1; // -1: this connection carries no upload (yet)
    const cut = () => {
      client.resetAndDestroy();
      upstream.resetAndDestroy();
    };
    client.on('data', (chunk: Buffer) => {
      if (uploadBytes < 0 && this.cutAfter !== null) {
        const at = chunk.indexOf('POST /api/traces');
        if (at >= 0) {
          uploadBytes = 0;
          chunk = chunk.subarray(at);
        }
      }
      if (uploadBytes >= 0 && this.cutAfter !== null) {
        const room = this.cutAfter - uploadBytes;
        if (chunk.length >= room) {
          if (room > 0) {
            upstream.write(chunk.subarray(0, room), () => {
              if (this.mode === 'cut') setTimeout(cut, 200);
            });
            this.cuts.push(this.cutAfter);
          }
          uploadBytes = this.cutAfter;
          if (this.mode === 'cut') client.pause();
          return;
        }
        uploadBytes += chunk.length;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (d) => client.write(d));
    client.on('end', () => upstream.end());
    upstream.on('end', () => client.end());
    client.on('close', () => upstream.destroy());
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  }
}

/**
 * For a spec file: a server of its own behind a CutOffProxy, started before
 * its tests and disposed after. Read the fields inside tests (they are set
 * by the beforeAll hook).
 */
export function useServerBehindProxy(): { server: ServerProcess; proxy: CutOffProxy; base: string } {
  const env = {} as { server: ServerProcess; proxy: CutOffProxy; base: string };
  test.beforeAll(async () => {
    env.server = new ServerProcess(await freePort());
    await env.server.start();
    env.proxy = new CutOffProxy(env.server.port);
    env.base = `http://127.0.0.1:${await env.proxy.listen()}`;
  });
  test.afterAll(async () => {
    await env.proxy?.close();
    await env.server?.dispose();
  });
  return env;
}
