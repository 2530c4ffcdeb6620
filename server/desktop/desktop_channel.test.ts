/**
 * `stallscope serve --desktop` as the desktop shell runs it: a real server
 * process, spoken to over its stdin and stdout (desktop_channel.ts).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import readline from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const TOKEN = 'f'.repeat(20) + '0123456789abcdef0123456789abcdef';
const FIXTURE = resolve('fixtures/reclaim_kswapd.v7.dat');

interface Desktop {
  child: ChildProcessWithoutNullStreams;
  lines: AsyncIterator<string>;
  url: string;
  dataDir: string;
  send(msg: object): void;
  next(): Promise<Record<string, unknown>>;
}

const started: Desktop[] = [];
afterAll(() => {
  for (const d of started.splice(0)) {
    d.child.kill('SIGKILL');
    rmSync(d.dataDir, { recursive: true, force: true });
  }
});

async function startDesktop(args: string[] = []): Promise<Desktop> {
  const dataDir = mkdtempSync(join(tmpdir(), 'stallscope-desktop-'));
  const child = spawn(
    process.execPath,
    [resolve('bin/stallscope.mjs'), 'serve', '--desktop', '--port', '0', '--data-dir', dataDir, ...args],
    { stdio: 'pipe' },
  );
  const lines = readline.createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async () => {
    const r = await lines.next();
    if (r.done) throw new Error('the server closed its stdout');
    return JSON.parse(r.value) as Record<string, unknown>;
  };
  const d: Desktop = { child, lines, url: '', dataDir, send: (m) => child.stdin.write(`${JSON.stringify(m)}\n`), next };
  started.push(d);
  d.send({ token: TOKEN });
  const ready = (await next()).ready as { url: string };
  d.url = ready.url;
  return d;
}

const bearer = { authorization: `Bearer ${TOKEN}` };

/** A finding of the trace (addressed by its stable id). */
async function firstFindingId(d: Desktop, traceId: string): Promise<number> {
  const r = (await (await fetch(`${d.url}api/traces/${traceId}/findings`, { headers: bearer })).json()) as {
    findings: { id: number }[];
  };
  return r.findings[0].id;
}

async function waitJob(d: Desktop, jobId: string): Promise<{ phase: string; traceId?: string; error?: string }> {
  for (let i = 0; i < 600; i++) {
    const s = (await (await fetch(`${d.url}api/jobs/${jobId}`, { headers: bearer })).json()) as {
      phase: string;
      traceId?: string;
      error?: string;
    };
    if (s.phase === 'done' || s.phase === 'failed') return s;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the job did not finish in 60 s');
}

function exited(d: Desktop, ms: number): Promise<boolean> {
  if (d.child.exitCode !== null || d.child.signalCode !== null) return Promise.resolve(true);
  return new Promise((res) => {
    const t = setTimeout(() => res(false), ms);
    d.child.once('exit', () => {
      clearTimeout(t);
      res(true);
    });
  });
}

// One server for most tests (each start costs seconds on a loaded 2-CPU machine).
let d: Desktop;
beforeAll(async () => {
  d = await startDesktop();
});

describe('serve --desktop', () => {
  it('takes its token from stdin only: not in argv, and every API route needs it', async () => {
    expect(d.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    expect(readFileSync(`/proc/${d.child.pid}/cmdline`, 'utf8')).not.toContain(TOKEN);
    expect((await fetch(`${d.url}api/traces`)).status).toBe(401);
    expect((await fetch(`${d.url}api/traces`, { headers: bearer })).status).toBe(200);
    // The page's first load turns the token into the cookie, as for `serve --token`.
    const page = await fetch(`${d.url}?token=${TOKEN}`);
    expect(page.headers.get('set-cookie')).toMatch(/HttpOnly; SameSite=Strict/);
  });

  it("ingests a file by path on the shell's request, and leaves the file where it was", async () => {
    const copy = join(d.dataDir, '..', `desktop-open-${process.pid}.dat`);
    copyFileSync(FIXTURE, copy);
    try {
      d.send({ open: { id: 7, path: copy } });
      const opened = (await d.next()).opened as { id: number; jobId: string; name: string };
      expect(opened.id).toBe(7);
      expect(opened.name).toBe(`desktop-open-${process.pid}.dat`);
      const job = await waitJob(d, opened.jobId);
      expect(job.phase).toBe('done');
      expect(job.traceId).toMatch(/^[0-9a-f]{64}$/);
      expect(statSync(copy).size).toBe(statSync(FIXTURE).size);
      const rec = (await (await fetch(`${d.url}api/traces/${job.traceId}`, { headers: bearer })).json()) as {
        status: string;
        name: string;
      };
      expect(rec).toMatchObject({ status: 'ready', name: `desktop-open-${process.pid}.dat` });
      // No team server set: links in excerpts are ones the desktop app opens, not this window's port.
      const fid = await firstFindingId(d, job.traceId!);
      const excerpt = await (
        await fetch(`${d.url}api/traces/${job.traceId}/excerpt?sel=finding:${fid}`, { headers: bearer })
      ).text();
      expect(excerpt).toContain(`stallscope://open/?trace=${job.traceId}`);
      expect(excerpt).not.toContain(d.url.slice(0, -1));
    } finally {
      rmSync(copy, { force: true });
    }
  });

  it('says why a path cannot be opened, and refuses relative paths', async () => {
    d.send({ open: { id: 1, path: '/nonexistent/trace.dat' } });
    expect((await d.next()).opened).toEqual({ id: 1, error: 'cannot open /nonexistent/trace.dat: no such file' });
    d.send({ open: { id: 2, path: tmpdir() } });
    expect(((await d.next()).opened as { error: string }).error).toMatch(/is a folder/);
    d.send({ open: { id: 3, path: 'fixtures/reclaim_kswapd.v7.dat' } });
    expect(((await d.next()).opened as { error: string }).error).toMatch(/absolute path/);
    d.send({ nonsense: true });
    expect((await d.next()).error).toMatch(/unknown request/);
  });

  it("writes links with the team server's address when one is set; stops when its stdin ends, even while ingesting", async () => {
    const team = await startDesktop(['--public-url', 'https://stalls.example.org']);
    team.send({ open: { id: 1, path: FIXTURE } });
    const job = await waitJob(team, ((await team.next()).opened as { jobId: string }).jobId);
    const fid = await firstFindingId(team, job.traceId!);
    const excerpt = await (
      await fetch(`${team.url}api/traces/${job.traceId}/excerpt?sel=finding:${fid}`, { headers: bearer })
    ).text();
    expect(excerpt).toContain(`https://stalls.example.org/?trace=${job.traceId}`);
    // The window closed or the shell died: its end of the pipe is gone.
    const copy = join(team.dataDir, 'again.dat');
    copyFileSync(FIXTURE, copy);
    team.send({ open: { id: 2, path: copy } });
    await team.next();
    team.child.stdin.end();
    expect(await exited(team, 10_000)).toBe(true);
    expect(existsSync(copy)).toBe(true);
  });

  it('refuses to start without a token on its first line', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'stallscope-desktop-'));
    const child = spawn(
      process.execPath,
      [resolve('bin/stallscope.mjs'), 'serve', '--desktop', '--port', '0', '--data-dir', dataDir],
      { stdio: 'pipe' },
    );
    let err = '';
    child.stderr.on('data', (b: Buffer) => (err += b));
    child.stdin.end('{"token":"short"}\n');
    const code = await new Promise<number | null>((res) => child.once('exit', (c) => res(c)));
    rmSync(dataDir, { recursive: true, force: true });
    expect(code).not.toBe(0);
    expect(err).toMatch(/first line on stdin must be \{"token"/);
  });
});
